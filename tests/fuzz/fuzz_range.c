// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the input is a Range field value. kweb_range_parse()
 * (kmod/http_range.c) must agree with the model in check.h for a set of
 * representation sizes, edge cases and one derived from the input.
 */
#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data;
	u64 derived = 0;
	size_t i;

	for (i = 0; i < size; i++)
		derived = derived * 31 + data[i];
	{
		const u64 sizes[] = {
			0, 1, 2, 3, 10, 100, 1000, 10 * 1024 * 1024,
			UINT64_MAX - 1, UINT64_MAX, derived % 100000,
			derived,
		};

		for (i = 0; i < ARRAY_SIZE(sizes); i++)
			check_range(b, size, sizes[i]);
	}
	return 0;
}
