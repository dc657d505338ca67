'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { slugify } = require('../slug.js');

test('lower-cases words', () => {
  assert.strictEqual(slugify('Hello World'), 'hello-world');
});

test('collapses punctuation and spaces', () => {
  assert.strictEqual(slugify('  Go 1.22: What\'s new?  '), 'go-1-22-what-s-new');
});
