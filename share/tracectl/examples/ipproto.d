#!/usr/bin/env -S tracectl dtrace -s
/*
 * ipproto.d -- IP packets counted by source address, destination address and
 * protocol name; the table is printed when tracing ends.
 *
 * Written for tracectl from the description of the ip provider in the Dynamic
 * Tracing Guide: args[2] is the packet's IP information (ipinfo_t), args[4] its
 * IPv4 header (ipv4info_t) and args[5] its IPv6 header (ipv6info_t); only the one
 * of the packet's version is meaningful.
 *
 * Usage:
 *	ipproto.d			trace live until Ctrl-C (as root)
 *	ipproto.d --trace DIR		count what a recorded trace holds
 */

#pragma D option quiet

dtrace:::BEGIN
{
	printf("Tracing IP packets... Hit Ctrl-C to end.\n");
}

ip:::send,
ip:::receive
{
	@packets[args[2]->ip_saddr, args[2]->ip_daddr,
	    args[2]->ip_ver == 4 ? args[4]->ipv4_protostr : args[5]->ipv6_nextstr] =
	    count();
}

dtrace:::END
{
	printf("   %-28s %-28s %6s %8s\n", "SADDR", "DADDR", "PROTO", "COUNT");
	printa("   %-28s %-28s %6s %@8d\n", @packets);
}
