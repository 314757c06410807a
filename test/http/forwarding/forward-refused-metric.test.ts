import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { post } from '../../helpers/http.ts'
import { restartedHolder } from '../../helpers/restarted-holder.ts'
import { scrape } from '../../helpers/metrics.ts'

const FRIEND = '5511988887777'

test('a forward refused by a process that does not hold the device (a new one at the holder URL): the client gets 503, the forward counts as failed, not answered', async () => {
  const { authkey, other, atOther, restart, stop } = await restartedHolder('refused-metric@example.com', { metrics: true })
  try {
    const forwards: { ok: boolean }[] = []
    other.events.on('forward', event => forwards.push(event))
    restart()
    const sent = await post(`${atOther.url}/api/create-message`, { authkey, appkey: 'loja', to: FRIEND, message: 'oi' })
    assert.equal([sent.status, sent.body.message], [503, 'O dispositivo está mudando de instância. Tente novamente em instantes.'])
    assert.equal(
      forwards.map(forward => forward.ok),
      [false],
      'the forward event says the holder did not answer',
    )
    const counted = await scrape(atOther.url)
    assert.is(counted.value('zapgate_forwarded_requests_total', { result: 'failed' }), 1)
    assert.is(counted.value('zapgate_forwarded_requests_total', { result: 'answered' }), 0)
  } finally {
    await stop()
  }
})

test.run()
