/**
 * The standalone server operator's account command (`npm run accounts -- <command> <email> [plan]`),
 * run beside the servers on the same store (GATEWAY_STORE, GATEWAY_STORE_NAMESPACE, GATEWAY_TIME_ZONE,
 * as for `npm start`). Running gateways see every change at once.
 *
 *   npm run accounts -- show <email>            the account (no secrets)
 *   npm run accounts -- renew <email> [plan]    a new expiracao: the plan's days from the last valid day
 *   npm run accounts -- rotate <email>          a new authkey (printed once); the old one stops working
 *   npm run accounts -- suspend <email>         refuse the account's key until resumed
 *   npm run accounts -- resume <email>
 */
import { accountAdmin, GatewayError } from 'zapgate'
import { storageFromUrl } from 'zapgate/adapters/storage-keyv'
import { defaultStore, parseTimeZone } from './env-config.ts'

const env = process.env
const [command, email, plan] = process.argv.slice(2)
const usage = 'usage: npm run accounts -- show|renew|rotate|suspend|resume <email> [plan]'

async function main(): Promise<number> {
  if (!command || !email || !['show', 'renew', 'rotate', 'suspend', 'resume'].includes(command)) {
    console.error(usage)
    return 2
  }
  // The store `npm start` uses with the same variables; a local peer's lives in its process only.
  const storeUrl = env.GATEWAY_STORE || defaultStore(env.GATEWAY_TRANSPORT ?? 'baileys', env.GATEWAY_WA_PEER)
  if (storeUrl === 'memory://') {
    console.error('GATEWAY_WA_PEER=local keeps accounts in the gateway process only: set GATEWAY_STORE to a store both can reach')
    return 2
  }
  // Read as `npm start` reads them; a wrong value is one line naming its variable (exit 1), never a stack trace.
  let timeZone: string | undefined
  let storage: Awaited<ReturnType<typeof storageFromUrl>>
  try {
    timeZone = env.GATEWAY_TIME_ZONE ? parseTimeZone(env.GATEWAY_TIME_ZONE) : undefined
    storage = await storageFromUrl(storeUrl, env.GATEWAY_STORE_NAMESPACE ? { namespace: env.GATEWAY_STORE_NAMESPACE } : {}).catch((err: Error) => {
      throw new Error(`GATEWAY_STORE${env.GATEWAY_STORE_NAMESPACE ? ' (GATEWAY_STORE_NAMESPACE)' : ''}: ${err.message}`)
    })
  } catch (err) {
    console.error((err as Error).message)
    return 1
  }
  try {
    const accounts = accountAdmin({ storage, ...(timeZone ? { timeZone } : {}) })
    if (command === 'show') {
      const account = await accounts.get(email)
      if (!account) throw new GatewayError('account-not-found')
      console.log(JSON.stringify(account, null, 2))
    } else if (command === 'rotate') {
      const { account, authkey } = await accounts.rotateKey(email)
      console.log(JSON.stringify({ ...account, authkey }, null, 2))
    } else {
      const account =
        command === 'renew' ? await accounts.renew(email, plan) : command === 'suspend' ? await accounts.suspend(email) : await accounts.resume(email)
      console.log(JSON.stringify(account, null, 2))
    }
    return 0
  } catch (err) {
    console.error(err instanceof GatewayError ? `${err.code}${err.detail ? `: ${err.detail}` : ''}` : err)
    return 1
  } finally {
    await storage.close?.()
  }
}

process.exitCode = await main()
