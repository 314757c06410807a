import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { checkUrl, isPrivateAddress, loggableUrl } from '../../src/security/url-policy.ts'

const policy = suite('url policy')

const refused = (url: string) => {
  const result = checkUrl(url, { allowPrivate: false })
  return 'refused' in result ? result.refused : undefined
}

policy('refuses loopback, private, CGNAT, link-local and metadata addresses', () => {
  for (const url of [
    'http://127.0.0.1/',
    'http://127.9.9.9:8080/x',
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://168.63.129.16/machine',
    'http://100.100.100.200/latest/meta-data',
    'http://192.0.0.192/opc/v2/instance/',
    'http://[fd00:ec2::254]/latest/meta-data',
    'http://0.0.0.0/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
  ])
    assert.is(refused(url), 'private', url)
})

policy('refuses decimal, hex and octal spellings of loopback', () => {
  for (const url of ['http://2130706433/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://0x7f.1/', 'http://127.1/'])
    assert.is(refused(url), 'private', url)
})

policy('refuses IPv6 loopback, ULA, link-local and IPv4-mapped private addresses', () => {
  for (const url of [
    'http://[::1]/',
    'http://[::]/',
    'http://[fd12:3456::1]/',
    'http://[fc00::1]/',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[2002:7f00:1::]/',
  ])
    assert.is(refused(url), 'private', url)
})

policy('refuses the IPv6 ranges IANA lists as not globally reachable, an IPv4 at their end notwithstanding', () => {
  // 64:ff9b:1::/48 is local-use NAT64 (RFC 8215): a /48 translator reads 10.0.0.1 from the first of these; 5f00::/16 SRv6 SIDs; 3fff::/20 documentation.
  for (const url of [
    'http://[64:ff9b:1:a00:0:100:808:808]/',
    'http://[64:ff9b:1::808:808]/',
    'http://[5f00::1]/',
    'http://[100:0:0:1::1]/',
    'http://[3fff::1]/',
  ])
    assert.is(refused(url), 'private', url)
  assert.is(refused('http://[64:ff9b::808:808]/'), undefined, 'the well-known NAT64 prefix is judged by its IPv4 address')
})

policy('refuses the IPv4-translated form (::ffff:0:a.b.c.d, SIIT) of a private address, as the mapped and NAT64 forms', () => {
  // ::ffff:0:0:0/96 (RFC 2765, the stateless translation of RFC 7915): a SIIT translator turns ::ffff:0:10.0.0.1 into 10.0.0.1.
  for (const url of ['http://[::ffff:0:127.0.0.1]/', 'http://[::ffff:0:7f00:1]/', 'http://[::ffff:0:10.0.0.1]/', 'http://[::ffff:0:169.254.169.254]/'])
    assert.is(refused(url), 'private', url)
  assert.ok(isPrivateAddress('::ffff:0:192.168.0.1'))
  assert.is(refused('http://[::ffff:0:808:808]/'), undefined, 'judged by its IPv4 address, as the well-known NAT64 prefix is')
})

policy('refuses internal host names', () => {
  for (const url of [
    'http://localhost/',
    'http://LOCALHOST:3000/',
    'http://app.localhost/',
    'http://metadata.google.internal/',
    'http://printer.local/',
    'http://intranet/',
  ])
    assert.is(refused(url), 'private', url)
})

policy('refuses internal host names and private addresses written with trailing dots, one or more (the URL parser keeps them all)', () => {
  for (const url of [
    'http://localhost./',
    'http://localhost../',
    'http://metadata.google.internal../',
    'http://printer.local.../',
    'http://intranet../',
    'http://127.0.0.1../',
  ])
    assert.is(refused(url), 'private', url)
})

policy('refuses non-http schemes, credentials and garbage', () => {
  assert.is(refused('file:///etc/passwd'), 'scheme')
  assert.is(refused('ftp://example.com/x'), 'scheme')
  assert.is(refused('gopher://example.com/'), 'scheme')
  assert.is(refused('javascript:alert(1)'), 'scheme')
  assert.is(refused('http://user:pass@example.com/'), 'credentials')
  assert.is(refused('not a url'), 'malformed')
  assert.is(refused(''), 'malformed')
})

policy('refuses port 0, which no connection can reach, in any spelling and whatever allowPrivate says', () => {
  for (const url of ['https://example.com:0/hook', 'http://example.com:00/', 'http://8.8.8.8:0/', 'http://[2606:4700:4700::1111]:0/'])
    assert.is(refused(url), 'malformed', url)
  assert.equal(checkUrl('http://127.0.0.1:0/', { allowPrivate: true }), { refused: 'malformed' })
  assert.equal(checkUrl('http://hooks.internal:0/', { allowPrivate: false, isAllowedAddress: () => true }), { refused: 'malformed' })
})

policy('accepts public addresses and names', () => {
  for (const url of ['https://example.com/hook', 'http://8.8.8.8/', 'https://[2606:4700:4700::1111]/', 'https://api.example.com.br:8443/a?b=c'])
    assert.is(refused(url), undefined, url)
})

policy('allowPrivate lets private targets through but still checks the scheme', () => {
  assert.ok('url' in checkUrl('http://127.0.0.1:9999/', { allowPrivate: true }))
  assert.ok('refused' in checkUrl('file:///etc/passwd', { allowPrivate: true }))
})

policy('isAllowedAddress judges literal addresses and lets internal names through to DNS, but never localhost or the metadata names', () => {
  const seam = { allowPrivate: false, isAllowedAddress: (address: string) => address === '10.0.0.5' }
  const verdict = (url: string) => {
    const result = checkUrl(url, seam)
    return 'refused' in result ? result.refused : undefined
  }
  for (const url of [
    'http://10.0.0.5/hook',
    'http://hooks.svc.cluster.local:8080/hook',
    'http://hooks.internal/',
    'http://intranet/',
    'http://printer.local./',
  ])
    assert.is(verdict(url), undefined, url)
  for (const url of [
    'http://10.0.0.6/',
    'http://169.254.169.254/',
    'http://localhost/',
    'http://app.localhost../',
    'http://metadata.google.internal/',
    'http://METADATA/',
  ])
    assert.is(verdict(url), 'private', url)
  assert.is(verdict('file:///etc/passwd'), 'scheme')
})

policy('isPrivateAddress treats non-addresses as private', () => {
  assert.ok(isPrivateAddress('not-an-ip'))
  assert.ok(!isPrivateAddress('1.1.1.1'))
  assert.ok(isPrivateAddress('::ffff:192.168.0.1'))
})

policy('a URL as logged keeps no credentials (a password holding a raw @ included), query or fragment', () => {
  assert.is(loggableUrl('https://user:pass@hooks.example.com/in?token=abc#x'), 'https://hooks.example.com/in')
  assert.is(loggableUrl('https://user:first@second@hooks.example.com/in'), 'https://hooks.example.com/in')
  assert.is(loggableUrl('https://hooks.example.com/a@b'), 'https://hooks.example.com/a@b', 'an @ in the path is no credential')
})

policy.run()
