// What D's compiler refuses before anything runs that the parser's grammar lets through:
// where a program puts its call stacks (stack(), ustack()), and the fields its clauses
// read that none of their probes records, as far as the program text and the probe
// descriptions tell (dtrace(1M) refuses both at compile time). The binder (binding.hpp)
// finds the rest once a trace's event classes show their fields.
#pragma once

#include "aggregate/program.hpp"

#include <functional>

namespace tracectl::aggregate {

/// Throws ProgramError, at the call, for a stack() or ustack() call anywhere but as a
/// whole aggregation key (`@[ustack()] = count()`) or as the action `ustack();`: a stack
/// is no value an expression, a predicate, a variable or another action can use.
/// "ustack() is only taken as an aggregation key (@[ustack()] = count()) or as an action
/// (ustack();): it cannot be printf() argument #2" (the argument counted as dtrace(1)
/// counts it, the format being #1).
void checkStackPlacement(const Program& program);

/// Throws ProgramError, at the identifier, for a field a clause reads that none of its
/// probes records:
/// - stack()'s callstack_kernel, ustack()'s callstack_user, when every probe of the
///   clause is BEGIN, END, ERROR, a timer, or trace events `recordsKernel` says are no
///   kernel event (LTTng-UST's: the call stack contexts are the kernel domain's);
/// - argN when every probe of the clause is BEGIN, END, ERROR, a timer, or a pid provider
///   probe that lacks it (an entry records arg0..arg5, a return arg1 only: dtrace's arg0
///   of a return, its offset, is not recorded).
/// `recordsKernel(probe)`: whether a trace events probe (no process's) enables kernel
/// events (a probe of a process always does).
void checkProbeFields(const Program& program,
                      const std::function<bool(const ProbeDescription&)>& recordsKernel);

} // namespace tracectl::aggregate
