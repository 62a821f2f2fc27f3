// Where the embedded database's thread starts (src/db/pglite-remote.ts spawns it). A worker
// inherits `--enable-source-maps` (`npm start` passes it), and with it on, Node reads and parses
// the source map of every module as it loads: here PGlite's 2.6 MB of maps, 40-50 ms of every
// start, on the thread that is the longer of the two (docs/performance.md), and each error's
// stack is mapped when read. This thread's stacks are PGlite's and its own message loop, so
// maps are turned off before anything else is loaded.
process.setSourceMapsEnabled(false);
await import('./pglite-thread.js');
