/**
 * Node's first arguments for a process that runs a TypeScript file of the project the way the tests
 * run: the `source` export condition (zapgate's own imports resolve to src/) and the tests' loader,
 * test/loader/register.mjs (a URL: it works from any working folder).
 */
export const NODE_TS: readonly string[] = ['--conditions=source', '--import', new URL('../loader/register.mjs', import.meta.url).href]
