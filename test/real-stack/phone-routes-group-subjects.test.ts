import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { simulatorServer } from '../../adapters/transport-memory/index.ts'
import { waPeerServer } from '../../adapters/wa-peer/index.ts'
import { post } from '../helpers/http.ts'

/**
 * `POST /_sim/groups` takes a group subject as the simulator does (WhatsApp's limit: 1 to 100
 * characters), on the simulator server and on the peer server alike: a blank or longer subject is
 * refused with 400 and makes no group. The peer used to create the group whatever the subject, so a
 * black-box test written against the simulator got 200 on the real stack.
 */
const subjects = suite('group subjects on the phone routes of the simulator and of the local WhatsApp peer')

const ANA = '5511988880002'
const BETO = '5511977770003'

for (const [name, start] of [
  ['simulator', async () => simulatorServer({ port: 0, host: '127.0.0.1' })],
  ['peer', async () => waPeerServer()],
] as const) {
  subjects(`${name}: a subject of 101 characters or a blank one is refused (400); 100 characters make a group`, async () => {
    const server = await start()
    try {
      for (const phone of [ANA, BETO]) assert.is((await post(`${server.url}/_sim/phones`, { phone })).status, 200)
      for (const subject of ['x'.repeat(101), '   ']) {
        const refused = await post(`${server.url}/_sim/groups`, { creator: ANA, subject, members: [BETO] })
        assert.equal([refused.status, refused.body.message], [400, 'group subject must have 1 to 100 characters'], refused.text)
      }
      const created = await post(`${server.url}/_sim/groups`, { creator: ANA, subject: 'y'.repeat(100), members: [BETO] })
      assert.equal([created.status, created.body.group?.subject], [200, 'y'.repeat(100)], created.text)
    } finally {
      await server.close()
    }
  })
}

subjects.run()
