/**
 * An AI agent without the AI: a small rule-based responder mounted on the gateway, on the simulated
 * network, so it runs with no phone and no API key.
 *
 *   PORT=3000 npx tsx --conditions=source examples/agent-rule-based.ts
 *
 * Then, with curl (the answers carry the keys):
 *   POST /api/auth         {"auth":"registrar","nome":"Ana","email":"ana@example.com","senha":"segredo1","telefone":"5511999990000","plano":"1"}
 *   POST /api/v2/qrcode    {"authkey":"…","setAppkey":"loja"}
 *   POST /_sim/scan        {"authkey":"…","appkey":"loja","phone":"5511911112222"}
 *   POST /api/v2/ia        {"authkey":"…","device":"loja","agent_name":"Bia"}
 *   POST /_sim/send        {"from":"5511933334444","to":"5511911112222","type":"text","text":"oi"}
 *   GET  /_sim/inbox/5511933334444      → the agent's answer
 */
import Koa from 'koa'
import { pathToFileURL } from 'node:url'
import { createGateway, type AgentRequest, type AgentResponder } from 'zapgate'
import { MemoryNetwork, memoryTransport, simulatorRoutes } from 'zapgate/adapters/transport-memory'
import { serve } from './serve.ts'

/** A rule: when `match` fits the text, `answer` is the reply. */
interface Rule {
  match: RegExp
  answer: (request: AgentRequest) => string
}

const rules: Rule[] = [
  { match: /^(menu|ajuda|\?)$/i, answer: () => menu },
  { match: /^(1|hor[aá]rio)/i, answer: () => 'Abrimos de segunda a sábado, das 9h às 18h.' },
  { match: /^(2|pre[cç]o|valor)/i, answer: () => 'A consulta custa R$ 50,00. Digite *3* para falar com uma pessoa.' },
  {
    match: /^(3|humano|atendente|pessoa)/i,
    answer: ({ contact }) => `Certo${contact.name ? `, ${contact.name}` : ''}! Uma pessoa da equipe vai responder em breve.`,
  },
  { match: /(obrigad|valeu)/i, answer: () => 'Por nada! 😊' },
]

const menu = 'Posso ajudar com:\n*1* Horário\n*2* Preços\n*3* Falar com uma pessoa'

/**
 * The rule-based responder: greets a new contact (empty history) with the menu, answers the rules
 * above, and after two texts it could not understand in a row suggests a person.
 */
export const ruleBasedResponder: AgentResponder = {
  respond(request) {
    const text = request.text.trim()
    if (request.history.length === 0) return `Olá! Eu sou ${request.agent.name}. ${menu}`
    const rule = rules.find(r => r.match.test(text))
    if (rule) return rule.answer(request)
    const lastAgentTurn = request.history.filter(turn => turn.role === 'agent').at(-1)
    if (lastAgentTurn?.text.startsWith('Não entendi')) return 'Ainda não entendi. Digite *3* para falar com uma pessoa.'
    return `Não entendi "${text.slice(0, 50)}". ${menu}`
  },
}

/** Start the demo server on `port` (0 for any free one); resolves with its URL, the network and a stop function. */
export async function startAgentDemo(port = 0) {
  const network = new MemoryNetwork()
  const gateway = await createGateway({ transport: memoryTransport({ network }), agentResponder: ruleBasedResponder })
  const app = new Koa()
  const sim = simulatorRoutes(network, { findDevices: gateway.findDevices })
  app.use(sim.routes()).use(gateway.routes())
  return { ...(await serve(app, port, gateway)), network, gateway }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { url } = await startAgentDemo(Number(process.env.PORT ?? 3000))
  console.log(`rule-based agent demo on ${url} (simulated network; see the comment at the top of this file)`)
}
