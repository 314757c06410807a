import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { keyvStorage } from '../../adapters/storage-keyv/index.ts'
import { startGateway } from '../helpers/gateway.ts'

const atRest = suite('secrets at rest')

atRest('the raw store never holds a password, authkey or appkey in clear', async () => {
  const storage = keyvStorage()
  const t = await startGateway({ storage })
  const password = 'minha-senha-super-secreta'
  const registered = await t.post('/api/auth', {
    auth: 'registrar',
    nome: 'Bia',
    email: 'bia@example.com',
    senha: password,
    telefone: '5511999990000',
    plano: '1',
  })
  const authkey = registered.body.data.authkey as string
  const random = await t.post('/api/developer', { authkey, message: 'caixa', conecteQR: 'true' })
  const appkey = random.body.appkey as string
  const token = String(random.body.link).split('/qr/')[1]
  await t.post('/api/v2/qrcode', { authkey, phone: '5511988887777' })
  const raw: string[] = []
  for await (const [key, value] of storage.list('')) raw.push(`${key} ${JSON.stringify(value)}`)
  await t.stop()
  const dump = raw.join('\n')
  assert.ok(raw.length > 5, 'the store has records')
  assert.ok(dump.includes('bia@example.com'), 'the dump is readable (sanity check)')
  for (const secret of [password, authkey, appkey, token]) assert.not.ok(dump.includes(secret), `found ${secret.slice(0, 6)}… in the store`)
  assert.match(dump, /scrypt\$16384\$8\$1\$/)
})

atRest.run()
