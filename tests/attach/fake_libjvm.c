// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fake_libjvm.c: built as libjvm.so; mapping it makes fake_jvm look like a JVM to discovery. */
int fake_libjvm_marker(void);

int fake_libjvm_marker(void)
{
	return 42;
}
