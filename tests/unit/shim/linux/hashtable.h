/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stand-in for linux/hashtable.h, on kapi.h's hlists: a fixed table,
 * keys hashed by their low bits (the kernel's hash_min() spreads them
 * better; the tests do not depend on where a key lands). One thread:
 * the _rcu variants are the plain ones.
 */
#ifndef SHIM_HASHTABLE_H
#define SHIM_HASHTABLE_H
#include "../kapi.h"

#define DEFINE_HASHTABLE(name, bits)	struct hlist_head name[1 << (bits)]
#define HASH_SIZE(name)			(ARRAY_SIZE(name))
#define hash_add_rcu(ht, node, key)					\
	hlist_add_head(node, &(ht)[(key) % HASH_SIZE(ht)])
#define hash_del_rcu(node)		hlist_del(node)
#define hash_for_each_possible_rcu(ht, obj, member, key)		\
	for ((obj) = shim_hlist_first(&(ht)[(key) % HASH_SIZE(ht)],	\
				      __typeof__(*(obj)), member);	\
	     (obj);							\
	     (obj) = shim_hlist_next(obj, member))
#define shim_hlist_first(head, type, member)				\
	((head)->first ? container_of((head)->first, type, member) : NULL)
#define shim_hlist_next(obj, member)					\
	((obj)->member.next ?						\
	 container_of((obj)->member.next, __typeof__(*(obj)), member) : NULL)

#endif
