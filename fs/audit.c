/* SPDX-License-Identifier: MIT */
/* Placeholder: being written. */
#include <errno.h>
#include "audit.h"
int jf_audit_parse_level(const char *s, enum jf_audit_level *out) { (void)s; (void)out; return -EINVAL; }
int jf_audit_start(const struct jf_audit_config *cfg) { (void)cfg; return -ENOSYS; }
bool jf_audit_wants(enum jf_audit_decision d, bool m) { (void)d; (void)m; return false; }
void jf_audit_emit(const struct jf_audit_event *ev) { (void)ev; }
void jf_audit_request_reopen(void) {}
void jf_audit_stop(void) {}
