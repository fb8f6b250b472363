import assert from 'node:assert/strict';
import fc from 'fast-check';
import { containsLink, extractLinks } from '../../src/posts/rules/links';
import { linksAsBefore } from './text-rules-before';

describe('posts rules: links as X auto-links them', () => {
  const linked = [
    ['https://example.com', 'https://example.com'],
    ['see http://example.com/path?q=1 now', 'http://example.com/path?q=1'],
    ['visit example.com today', 'example.com'],
    ['www.example.de', 'www.example.de'],
    ['example.de/path', 'example.de/path'],
    ['go to google.co', 'google.co'],
    ['watch MLB.tv', 'MLB.tv'],
    ['(example.org)', 'example.org'],
    ['end of sentence example.com.', 'example.com'],
    ['https://en.wikipedia.org/wiki/Primer_(film)', 'https://en.wikipedia.org/wiki/Primer_(film)'],
    ['link: https://例え.テスト/パス', 'https://例え.テスト/パス'],
    ['https://10.0.0.1/admin', 'https://10.0.0.1/admin'],
    ['https://example.unlistedtld', 'https://example.unlistedtld'],
    ['shop.app', 'shop.app'],
    ['wow https://example.com/path!', 'https://example.com/path'],
    ['"https://example.com/a?b=c&d=e"', 'https://example.com/a?b=c&d=e'],
    ['https://example.com/a;', 'https://example.com/a'],
    ['(https://example.com/a)', 'https://example.com/a'],
  ] as const;
  for (const [text, url] of linked) {
    it(`finds ${url} in "${text}"`, () => {
      assert.deepEqual(
        extractLinks(text).map((l) => l.url),
        [url],
      );
    });
  }

  const notLinked = [
    'e.g. this is fine',
    'i.e. nothing',
    'open file.txt please',
    'version 1.2.3 is out',
    'release v2.0.1',
    'node.js and vue.js',
    'see readme.md',
    'run config.py',
    'mail me at john@example.com',
    '#example.com hashtag',
    '$example.com',
    'path/to/example.com',
    'a.b',
    'http://',
    'IP 10.0.0.1 without scheme',
    'twitter.jp',
    'Is it readme.md?',
  ];
  for (const text of notLinked) {
    it(`finds no link in "${text}"`, () => {
      assert.deepEqual(extractLinks(text), []);
      assert.equal(containsLink(text), false);
    });
  }

  for (const [text, url] of [
    ['HTTPS://EXAMPLE.COM/A', 'HTTPS://EXAMPLE.COM/A'],
    ['see Http://Example.org now', 'Http://Example.org'],
    ['visit EXAMPLE.COM today', 'EXAMPLE.COM'],
  ] as const) {
    it(`finds ${url} in "${text}", whatever the case of its scheme and host`, () => {
      assert.deepEqual(
        extractLinks(text).map((l) => l.url),
        [url],
      );
    });
  }

  it('ends a link where the extraction as it was ended it, whatever ASCII character follows it', () => {
    for (let code = 0x21; code < 0x7f; code++) {
      for (const text of [`see https://example.com/a${String.fromCharCode(code)} now`, `example.com/a?b=c${String.fromCharCode(code)}`]) {
        assert.deepEqual(extractLinks(text), linksAsBefore(text), text);
      }
    }
  });

  it('agrees with the extraction as it was (before its dot check and its explicit-case scheme) on any text', () => {
    const pieces = fc.constantFrom(
      ...['.', '. ', '..', '.c', '.C', '.co', '.de', '.com', '.ORG', '.tv', '.md', '.рф', '.テスト', '.1', '.x/', '/', '?', '#', ':', ':8080', ')', '(', '!', ' '],
      ...'=_+-&,;\'"*%~^[]{}<>|`'.split(''),
      ...['http://', 'https://', 'HTTPS://', 'hTtP://', 'example', 'Example', 'www', 'a', 'x', 'shop', '10', '0', '255', 'é', 'ü', '日本', '@', '$', '_', '-', '\u0301', '👍'],
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        assert.deepEqual(extractLinks(text), linksAsBefore(text), text);
      }),
      { numRuns: 3000 },
    );
  });

  it('reports offsets of each link', () => {
    assert.deepEqual(extractLinks('a example.com b https://x.com/y'), [
      { url: 'example.com', start: 2, end: 13, hasScheme: false },
      { url: 'https://x.com/y', start: 16, end: 31, hasScheme: true },
    ]);
  });
});
