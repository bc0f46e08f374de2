//! Debug helper: prints the prepared schema of a revision (JSON) to stdout.
fn main() {
    let id = std::env::args().nth(1).expect("revision");
    let layout = mcp_codegen::Layout::workspace();
    let manifest = mcp_codegen::Manifest::load(&layout.manifest_path()).expect("manifest");
    let source = mcp_codegen::SchemaSource::offline(layout.cache_dir());
    let input: mcp_codegen::Input =
        mcp_codegen::load::load(manifest.get(&id).expect("rev"), &source)
            .expect("load")
            .into();
    let a = mcp_codegen::analyse(&input).expect("analyse");
    println!(
        "{}",
        serde_json::to_string_pretty(&a.prepared.root_schema()).expect("json")
    );
}
