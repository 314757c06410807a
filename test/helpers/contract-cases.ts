/** A contract suite as a registry function takes it: `suite(test)` registers each case with `test(name, fn)`. */
type Registering = (test: (name: string, fn: () => Promise<void>) => void) => void

/**
 * The cases of a contract suite whose names contain `part`, to run one by one against a broken
 * adapter (each resolves, or rejects with the failed assertion). Fails when no case matches, so a
 * renamed case does not leave a test that can no longer fail.
 */
export function contractCases(register: Registering, part: string): Array<{ name: string; run: () => Promise<void> }> {
  const cases: Array<{ name: string; run: () => Promise<void> }> = []
  register((name, run) => void (name.includes(part) && cases.push({ name, run })))
  if (cases.length === 0) throw new Error(`no contract case is named with ${JSON.stringify(part)}`)
  return cases
}

/** The names of the cases among `cases` that reject (the broken adapter fails them), each with its failure's first line. */
export async function failingCases(cases: Array<{ name: string; run: () => Promise<void> }>): Promise<string[]> {
  const failures: string[] = []
  for (const { name, run } of cases) {
    await run().catch((err: unknown) => failures.push(`${name}: ${String(err instanceof Error ? err.message : err).split('\n')[0]}`))
  }
  return failures
}
