// At run time this path serves the `yaml` package's browser build (copied by
// scripts/build-ui.mjs); for the type checker it is the package itself.
export * from 'yaml';
