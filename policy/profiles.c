/* SPDX-License-Identifier: MIT */
/* Placeholder: being written. */
#include "policy.h"
