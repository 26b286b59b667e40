// SPDX-License-Identifier: GPL-2.0
/*
 * The character classes of http_token.h, one byte per character: the
 * parsers test every byte of every head, and one load and a test cost
 * less than a chain of comparisons or a shift of a bit set. KUnit checks
 * each class against its RFC's definition for all 256 bytes. Pure logic.
 */
#include "http_token.h"

#define T	KWEB_CT_TCHAR
#define V	KWEB_CT_VALUE
#define G	KWEB_CT_TARGET
#define H	KWEB_CT_HOST
#define X	KWEB_CT_HEX
#define D	KWEB_CT_DIGIT
#define P	KWEB_CT_PATH

const u8 kweb_http_ctype[256] = {
	['\t'] = V,
	[' '] = V,
	['!'] = T | V | G | P | H,
	['"'] = V | G | P,
	['#'] = T | V | G,
	['$'] = T | V | G | P | H,
	['%'] = T | V | G,
	['&'] = T | V | G | P | H,
	['\''] = T | V | G | P | H,
	['('] = V | G | P | H,
	[')'] = V | G | P | H,
	['*'] = T | V | G | P | H,
	['+'] = T | V | G | P | H,
	[','] = V | G | P | H,
	['-'] = T | V | G | P | H,
	['.'] = T | V | G | P | H,
	['/'] = V | G,
	['0' ... '9'] = T | V | G | P | H | X | D,
	[':'] = V | G | P,
	[';'] = V | G | P | H,
	['<'] = V | G | P,
	['='] = V | G | P | H,
	['>'] = V | G | P,
	['?'] = V | G,
	['@'] = V | G | P,
	['A' ... 'F'] = T | V | G | P | H | X,
	['G' ... 'Z'] = T | V | G | P | H,
	['['] = V | G | P,
	['\\'] = V | G | P,
	[']'] = V | G | P,
	['^'] = T | V | G | P,
	['_'] = T | V | G | P | H,
	['`'] = T | V | G | P,
	['a' ... 'f'] = T | V | G | P | H | X,
	['g' ... 'z'] = T | V | G | P | H,
	['{'] = V | G | P,
	['|'] = T | V | G | P,
	['}'] = V | G | P,
	['~'] = T | V | G | P | H,
	/* obs-text: in targets (like nginx) and field values, nowhere else */
	[0x80 ... 0xff] = V | G | P,
};
