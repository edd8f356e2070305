#include "filter/event_filter.hpp"

#include "common/error.hpp"
#include "filter/filter_compiler.hpp"
#include "filter/ftrace_filter.hpp"

namespace tracectl {

void setEventFilter(EventRule& r, std::string expression) {
    r.filter = std::move(expression);
    try {
        // Kernel filters go to tracefs (translated again, with the
        // event's field names, by the kernel domain).
        if (r.domain == TracingDomain::Kernel)
            filter::toFtraceFilter(r.filter);
        else
            r.filterBytecode = filter::compileFilter(r.filter).ustAbiBytes();
    } catch (const filter::FilterError& e) {
        throw Error(ErrorCode::InvalidArgument, e.what());
    }
}

} // namespace tracectl
