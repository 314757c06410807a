import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { generateWAMessageContent } from '@whiskeysockets/baileys'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB } from '../helpers/baileys-fixtures.ts'

const preview = suite('Baileys transport: no link previews fetched by the server')

// Baileys fetches the first URL of a text to build its preview (through the optional package
// link-preview-js, when the host has it installed) unless the content says `linkPreview: null`: a
// server-side fetch of any https URL a caller writes (a name may resolve to a private address), past the gateway's URL guard.
preview('a text with a URL, sent or as the buttons fallback, never asks Baileys for the URL', async () => {
  for (const buttonsFallback of ['interactive', 'text'] as const) {
    const s = await linkedBaileys({ buttonsFallback })
    try {
      await s.transport.send('dev', BOB, { kind: 'text', text: 'veja https://intranet.example.com/admin agora' })
      await s.transport.send('dev', BOB, {
        kind: 'buttons',
        text: 'https://docker.internal.example:2375/info',
        buttons: [{ type: 'reply', id: 'a', text: 'A' }],
      })
      const contents = s.fake.sent('dev').flatMap(record => (record.via === 'sendMessage' && 'text' in record.content ? [record.content] : []))
      assert.ok(contents.length >= 1)
      for (const content of contents) {
        const asked: string[] = []
        // What Baileys' own sendMessage does with this content (its getUrlInfo is the socket's fetcher).
        await generateWAMessageContent(content as never, { getUrlInfo: async url => (asked.push(url), undefined), upload: async () => ({}) as never })
        assert.equal(asked, [], `Baileys was asked to fetch ${asked.join(', ')}`)
      }
    } finally {
      await s.transport.stop()
    }
  }
})

preview.run()
