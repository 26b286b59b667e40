// SPDX-License-Identifier: GPL-2.0
/*
 * kweb's tracepoints: their code is made here, once; trace.h declares
 * them for the rest.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
