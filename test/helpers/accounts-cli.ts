import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname

/** `npm run accounts -- <args>` (examples/accounts.ts) with `env` added to this process's; resolves with its exit code and output. */
export async function accounts(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'accounts', '--', ...args], { cwd: root, env: { ...process.env, ...env } })
    return { code: 0, out: stdout, err: stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, out: failed.stdout, err: failed.stderr }
  }
}

/** The registration body (operation 1) both account command tests start with. */
export const registration = { auth: 'registrar', nome: 'Ana', email: 'ana@example.com', senha: 'senha-secreta', telefone: '5511912345678', plano: '1' }
