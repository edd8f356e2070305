#!/usr/bin/env -S tracectl dtrace -s
/*
 * ipio.d -- one line per IP packet sent or received: the CPU, the microseconds
 * since the packet before it, the local address, the direction (-> sent,
 * <- received), the remote address, the interface and the IP payload's bytes.
 *
 * Written for tracectl from the description of the ip provider in the Dynamic
 * Tracing Guide: args[2] is the packet's IP information (ipinfo_t) and args[3]
 * the interface's (ifinfo_t).
 *
 * Usage:
 *	ipio.d				trace live until Ctrl-C (as root)
 *	ipio.d --trace DIR		the packets a recorded trace holds
 */

#pragma D option quiet
#pragma D option switchrate=10hz

dtrace:::BEGIN
{
	printf(" %3s %10s %15s    %-15s %8s %6s\n", "CPU", "DELTA(us)", "SOURCE", "DEST",
	    "INT", "BYTES");
	last = timestamp;
}

ip:::send
{
	this->delta = (timestamp - last) / 1000;
	printf(" %3d %10d %15s -> %-15s %8s %6d\n", cpu, this->delta,
	    args[2]->ip_saddr, args[2]->ip_daddr, args[3]->if_name,
	    args[2]->ip_plength);
	last = timestamp;
}

ip:::receive
{
	this->delta = (timestamp - last) / 1000;
	printf(" %3d %10d %15s <- %-15s %8s %6d\n", cpu, this->delta,
	    args[2]->ip_daddr, args[2]->ip_saddr, args[3]->if_name,
	    args[2]->ip_plength);
	last = timestamp;
}
