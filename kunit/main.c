// SPDX-License-Identifier: GPL-2.0
/*
 * kweb_test.ko: the KUnit suites of kweb's pure logic. Each suite file
 * registers itself with kunit_test_suite(); the module's license and
 * description live here, once.
 */
#include <linux/module.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit suites for kweb's pure logic");
