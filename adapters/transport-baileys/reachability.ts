import type { Agent } from 'node:http'
import type { Logger } from 'zapgate'
import { httpGet, networkErrorText } from './http-get.ts'
import type { ResolvedOptions } from './options.ts'
import { redactProxy, type ProxyAgents } from './proxy.ts'

/** Where Baileys connects by default. */
const WHATSAPP_WS_URL = 'wss://web.whatsapp.com/ws/chat'

/**
 * Whether WhatsApp's WebSocket endpoint answers from this server (through `agent`, the proxy, when
 * given): a plain HTTP(S) request to it; any HTTP answer, even a refusal, means the network path
 * works. Resolves with undefined when it does, else with why not (the network error: ENOTFOUND,
 * ECONNREFUSED, a proxy's refusal, a timeout).
 */
async function whyUnreachable(wsUrl: string | URL, agent: Agent | undefined, timeoutMs = 5_000): Promise<string | undefined> {
  const url = new URL(String(wsUrl))
  url.protocol = url.protocol === 'ws:' ? 'http:' : 'https:'
  try {
    await httpGet(url.href, { agent, timeoutMs, maxBytes: 0 })
    return undefined
  } catch (err) {
    return networkErrorText(err)
  }
}

/** Check at start-up and log the outcome: an error naming the cause when WhatsApp cannot be reached. */
async function logReachability(wsUrl: string | URL, agent: Agent | undefined, logger: Logger, via?: string): Promise<void> {
  const started = Date.now()
  const problem = await whyUnreachable(wsUrl, agent)
  const where = { url: String(wsUrl), ...(via ? { proxy: via } : {}), ms: Date.now() - started }
  if (problem)
    logger.error({ ...where, cause: problem }, `WhatsApp cannot be reached from this server (${problem}); devices cannot connect or link until it can`)
  else logger.info(where, 'WhatsApp is reachable from this server')
}

/** Log whether WhatsApp can be reached (through the proxy when there is one for every device). */
export async function checkReachability(options: ResolvedOptions, proxies: ProxyAgents, logger: Logger): Promise<void> {
  const proxy = typeof options.proxy === 'string' ? options.proxy : undefined
  if (typeof options.proxy === 'function')
    return void logger.info({}, 'proxies are chosen per device: each device reports whether WhatsApp can be reached when it connects')
  const agent = proxy ? await proxies.get(proxy) : undefined
  await logReachability(options.socketConfig.waWebSocketUrl ?? WHATSAPP_WS_URL, agent, logger, proxy && redactProxy(proxy)).catch(err =>
    logger.error({ err }, 'the reachability check failed'),
  )
}
