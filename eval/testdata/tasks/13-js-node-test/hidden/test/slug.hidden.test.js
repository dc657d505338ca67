'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { slugify } = require('../slug.js');

test('hidden: only separators', () => {
  assert.strictEqual(slugify(' -- ! '), '');
  assert.strictEqual(slugify('a  b'), 'a-b');
});
