/**
 * An agent backed by an LLM, with nothing but fetch: any OpenAI-compatible chat completions endpoint
 * (OpenAI, Azure OpenAI, Groq, OpenRouter, a local Ollama or vLLM...).
 *
 *   const gateway = await createGateway({
 *     agentResponder: llmResponder({ baseUrl: process.env.LLM_BASE_URL!, apiKey: process.env.LLM_API_KEY, model: 'gpt-4o-mini' }),
 *   })
 */
import type { AgentResponder } from 'zapgate'

/** Where the model lives. */
export interface LlmOptions {
  /** The API's base URL, without `/v1/chat/completions` (e.g. `https://api.openai.com`, `http://127.0.0.1:11434`). */
  baseUrl: string
  apiKey?: string
  model: string
}

/** A responder that asks the model, with the flow conversation as the chat history. */
export function llmResponder({ baseUrl, apiKey, model }: LlmOptions): AgentResponder {
  return {
    async respond({ agent, text, history, signal }) {
      const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify({
          model,
          messages: [
            { role: 'system', content: `Você é ${agent.name}, atendente. Responda em português, em poucas frases.` },
            ...history.map(turn => ({ role: turn.role === 'contact' ? 'user' : 'assistant', content: turn.text })),
            { role: 'user', content: text },
          ],
        }),
        signal, // the gateway aborts it at agentTimeoutMs
      })
      if (!response.ok) throw new Error(`the LLM answered ${response.status}`) // logged; no reply sent
      const data = (await response.json()) as { choices?: { message?: { content?: string } }[] }
      return data.choices?.[0]?.message?.content
    },
  }
}
