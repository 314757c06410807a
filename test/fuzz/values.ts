import fc from 'fast-check'
import { FRIEND, OTHER } from '../helpers/messaging.ts'
import { PNG } from '../helpers/samples.ts'
import { DeepValue, HugeString } from './wire.ts'
import type { FuzzWorld } from './world.ts'

/** A value that is hostile to a parser or a validator. */
export function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom<unknown>(...SPECIAL_VALUES) },
    { weight: 2, arbitrary: flagSpelling() },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 64 }) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.bigInt().map(n => Number(n)),
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 2, max: 5000 }).map(depth => new DeepValue(depth)) },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 200_000 }).map(length => new HugeString(length)) },
    { weight: 1, arbitrary: prototypeKeys() },
  )
}

/** Every spelling of a flag a client might send, right or wrong. */
export function flagSpelling(): fc.Arbitrary<unknown> {
  return fc.constantFrom<unknown>(
    true,
    false,
    'true',
    'false',
    'TRUE',
    'False',
    ' true ',
    '1',
    '0',
    1,
    0,
    'yes',
    'no',
    'on',
    'off',
    't',
    'f',
    '',
    'null',
    'undefined',
    2,
    -1,
    'truee',
    'excluir',
    'EXCLUIR',
  )
}

/** A plausible value for a wire field (so that requests reach the handlers), by field name. */
export function plausibleValue(field: string, world: FuzzWorld): fc.Arbitrary<unknown> {
  const pick = (...values: unknown[]) => fc.constantFrom(...values)
  const table: Record<string, () => fc.Arbitrary<unknown>> = {
    authkey: () => pick(world.authkey, world.authkey, world.otherAuthkey, 'chave-inexistente'),
    appkey: () => pick(world.appkey, 'loja', 'outro', world.deviceId),
    device: () => pick('loja', world.deviceId, world.appkey, 'nenhum'),
    message: () => pick('olá', 'false', 'true', 'loja', world.deviceId, 'Seu código: {code}', '👍', 'remove', FRIEND, 'Grupo novo'),
    to: () => pick(FRIEND, `+${FRIEND}`, world.groupId, `${FRIEND}@s.whatsapp.net`, 'todos', '123', 'loja'),
    setAppkey: () => pick('loja', 'novo-dispositivo', 'x'.repeat(65)),
    phone: () => pick(FRIEND, '+55 11 98888-0002', '12'),
    webhook: () => pick('https://hooks.example.com/zap', 'http://127.0.0.1:1/x', 'file:///etc/passwd', 'http://169.254.169.254/', 'nota url'),
    email: () => pick('fuzz@example.com', 'fuzz-2@example.com', 'not-an-email'),
    senha: () => pick('senha-secreta', '123'),
    nome: () => pick('Fuzz', ''),
    telefone: () => pick('+5511999990000', 'abc'),
    plano: () => pick('1', '2', '__proto__', 'constructor'),
    auth: () => pick('registrar', 'REGISTRAR', 'login'),
    agent_name: () => pick('Bia', ''),
    file: () =>
      pick(
        PNG.toString('base64'),
        `data:image/png;base64,${PNG.toString('base64')}`,
        'https://files.example.com/a.png',
        'https://files.example.com/fail.png',
        'http://10.0.0.1/x.png',
        '/etc/passwd',
        'file:///etc/passwd',
        'AAAA',
      ),
    descricao: () => pick('legenda', ''),
    format: () => pick('png', 'mp3', 'ogg', 'pdf', 'exe', ''),
    contact: () => pick('Ana', ''),
    latitude: () => pick('-23.5505', '91', 'abc'),
    longitude: () => pick('-46.6333', '181', '1e3'),
    id: () => pick(world.sentId, world.receivedId, 'nao-existe'),
    deleteID: () => pick(world.sentId, world.receivedId, 'nao-existe'),
    markRead: () => pick(world.receivedId, world.sentId, 'true'),
    idMessagem: () => pick(world.receivedId, 'nao-existe'),
    idMensagem: () => pick(world.receivedId, 'nao-existe'),
    buttons: () => pick(BUTTONS, JSON.stringify(BUTTONS), [...BUTTONS, ...BUTTONS], [{ type: 'quickReplyButton', displaytext: 'x', id: 'x' }]),
    cards: () => pick(CARDS, JSON.stringify(CARDS), Array(11).fill(CARDS[0]), [{ ...CARDS[0], image_url: 'http://127.0.0.1/a.png' }]),
    header_title: () => pick('Loja', 'h'.repeat(61)),
    footer_text: () => pick('Rodapé', ''),
    agendamento: () => pick('2099-01-01 10:00:00', `${new Date().getUTCFullYear() + 1}-01-01 10:00:00`, '2020-01-01 10:00:00', '2026-02-30 10:00:00', 'amanhã'),
    verificarOTP: () => pick('123456', '000000', 'abcdef'),
    type: () => pick('chat', 'grupo', 'GRUPO', 'outro'),
    infoConvite: () => pick(world.groupId, world.invite, '120363000000000001@g.us', 'https://chat.whatsapp.com/'),
    usuarios: () =>
      pick(
        `${FRIEND}-${OTHER}`,
        `["${FRIEND}"]`,
        [FRIEND],
        'abc',
        Array(1024)
          .fill(FRIEND)
          .map((p, i) => String(Number(p) + i))
          .join('-'),
      ),
    entrarConvite: () => pick(world.invite, 'https://chat.whatsapp.com/AAAAAAAAAAAAAAAAAAAAAA', 'convite'),
    GerenciarLinks: () => pick('excluir', 'criar'),
  }
  return (table[field] ?? (() => flagSpelling()))()
}

// --- Internal helpers ---

const BUTTONS = [
  { type: 'replyButton', displaytext: 'Sim', id: 'sim' },
  { type: 'urlButton', displaytext: 'Site', action: 'https://example.com' },
  { type: 'callButton', displaytext: 'Ligar', action: '+551133334444' },
]

const CARDS = [
  {
    image_url: 'https://files.example.com/card.png',
    title: 'Pizza',
    buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'pizza' }],
  },
]

const SPECIAL_VALUES: unknown[] = [
  null,
  '',
  ' ',
  '\t\n',
  '\u0000',
  '\ud800',
  '\u202e',
  '%00',
  '%',
  '../../etc/passwd',
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '{"a":',
  '[{"type":"replyButton"}]',
  '[]',
  '{}',
  'NaN',
  'Infinity',
  '-0',
  '1e999',
  0,
  -0,
  Number.MAX_SAFE_INTEGER + 2,
  1e308,
  -1e308,
  [],
  {},
  [null],
  [[]],
  { toString: 'x' },
  { valueOf: 1 },
  { length: 5 },
  { 0: 'a', 1: 'b' },
  { 0: { type: 'replyButton', displaytext: 'x' } },
]

function prototypeKeys(): fc.Arbitrary<unknown> {
  return fc.constantFrom<unknown>(
    JSON.parse('{"__proto__":{"polluted":true,"status":500}}'),
    JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'),
    JSON.parse('[{"__proto__":{"type":"replyButton","displaytext":"x"}}]'),
    JSON.parse('{"prototype":{"polluted":true},"0":{"__proto__":{"polluted":true}}}'),
  )
}
