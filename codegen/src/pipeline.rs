//! The per-revision part of [`generate`](crate::generate) spread over threads: each
//! revision is rendered, fingerprinted for sharing and printed on one thread (its syn
//! trees cannot leave it); only the sharing plan is made over all revisions together.

use serde_json::Value;

use crate::par;
use crate::render::{self, share};
use crate::{Analysed, Input, Result};

/// [`analyse`](crate::analyse) of every input, in input order.
pub(crate) fn analyse_all(inputs: &[Input]) -> Result<Vec<Analysed>> {
    let definitions = |i: &Input| {
        i.schema
            .get(i.revision.dialect.definitions_key())
            .and_then(Value::as_object)
            .map_or(0, serde_json::Map::len)
    };
    par::map(inputs, definitions, crate::analyse)
        .into_iter()
        .collect()
}

/// The printed Rust files of the revisions.
pub(crate) struct Printed {
    /// `shared.rs`.
    pub(crate) shared: String,
    /// `types.rs` and `methods.rs` of each revision, in input order.
    pub(crate) revisions: Vec<(String, String)>,
}

/// Renders, shares out and prints the types and methods of every revision.
pub(crate) fn print(analysed: &[Analysed]) -> Result<Printed> {
    print_on(par::threads(analysed.len()), analysed)
}

fn print_on(threads: usize, analysed: &[Analysed]) -> Result<Printed> {
    let revisions: Vec<_> = analysed.iter().map(|a| a.revision.clone()).collect();
    let (plan, printed) = par::two_phase(
        threads,
        analysed,
        |a| a.prepared.defs.len(),
        |_, a| {
            let (file, impls) = render::types::render_unparsed(&a.prepared, &a.ir)?;
            let mut split = share::Split::new(file, impls);
            let fingerprint = split.fingerprint();
            let methods = render::methods_file(&a.revision, &a.ir);
            Ok(((split, methods), fingerprint))
        },
        |prints| Ok(share::plan(&revisions, &prints)),
        |r, (split, methods), plan| {
            let (file, modules) = split.rebuild(plan, r);
            let types = render::types_file(&revisions[r], &file);
            let modules: Vec<(usize, String)> = modules
                .into_iter()
                .map(|(index, item)| {
                    let file = syn::File {
                        shebang: None,
                        attrs: Vec::new(),
                        items: vec![item],
                    };
                    (index, prettyplease::unparse(&file))
                })
                .collect();
            (types, methods, modules)
        },
    )?;
    let mut modules = vec![String::new(); plan.module_count()];
    let mut files = Vec::with_capacity(printed.len());
    for (types, methods, printed_modules) in printed {
        for (index, text) in printed_modules {
            modules[index] = text;
        }
        files.push((types, methods));
    }
    Ok(Printed {
        shared: render::shared_file(&modules),
        revisions: files,
    })
}

#[cfg(test)]
mod tests {
    use crate::{Layout, Manifest, SchemaSource};

    #[test]
    fn output_does_not_depend_on_the_thread_count() {
        let layout = Layout::workspace();
        let manifest = Manifest::load(&layout.manifest_path()).expect("manifest");
        let source = SchemaSource::offline(layout.cache_dir());
        let inputs = crate::load_inputs(&manifest, &source, None).expect("inputs");
        let analysed = super::analyse_all(&inputs).expect("analyse");
        let one = super::print_on(1, &analysed).expect("one thread");
        let three = super::print_on(3, &analysed).expect("three threads");
        assert!(one.shared == three.shared, "shared.rs differs");
        assert!(
            one.revisions == three.revisions,
            "a revision's files differ"
        );
    }
}
