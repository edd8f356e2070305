// ftrace's `format` files (tracefs events/SYSTEM/EVENT/format) and
// events/header_page, parsed. The text's shape (the kernel's
// kernel/trace/trace_events.c f_show and ring_buffer.c
// ring_buffer_print_page_header):
//
//   name: sched_switch
//   ID: 372
//   format:
//   \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
//   ...
//   \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
//
//   print fmt: "..."
//
// Pure text processing: no tracefs access here.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::kernel {

/// A format text that does not have the shape above. what() names the
/// 1-based line and quotes it.
class FormatError : public std::runtime_error {
public:
    FormatError(std::size_t line, const std::string& reason, std::string_view text);
    std::size_t line() const noexcept { return line_; }

private:
    std::size_t line_;
};

/// One `field:` line.
struct FormatField {
    /// The declaration's type as written, array suffix removed:
    /// "unsigned short", "char", "const char *", "__data_loc char[]".
    std::string type;
    std::string name;         ///< a C identifier
    std::uint32_t offset = 0; ///< bytes from the record's start (common_type)
    std::uint32_t size = 0;   ///< bytes (for a loc field: 4, the u32 location)
    bool isSigned = false;
    bool isDataLoc = false; ///< `__data_loc T[] name` or `__data_loc T name`
    bool isRelLoc = false;  ///< `__rel_loc T[] name`
    /// True for `T name[N]` (whatever N is), false for scalars and locs.
    bool isArray = false;
    /// N of `T name[N]` when N is a decimal number; 0 for `name[0]`/`name[]`
    /// (a dynamic array with no fixed bytes); nullopt for a scalar, a loc
    /// field, or an N that is not a number.
    std::optional<std::uint32_t> arrayLength;
    /// The element type: of an array "char" for `char x[16]`, of a loc field
    /// "char" for `__data_loc char[]`, "u64" for `__data_loc u64[]`,
    /// "cpumask_t" for `__data_loc cpumask_t`; of a scalar its type.
    std::string elementType;

    /// The ftrace common fields (struct trace_entry) are named `common_*`.
    bool isCommon() const noexcept { return name.rfind("common_", 0) == 0; }
    bool operator==(const FormatField&) const = default;
};

/// One event's format.
struct EventFormat {
    std::string name;                ///< `name:` (no system)
    std::uint16_t id = 0;            ///< `ID:`, the records' common_type
    std::vector<FormatField> fields; ///< in file order (common_* first)
    bool operator==(const EventFormat&) const = default;
};

/// Parses an event's `format` text. Strict: `name:`, `ID:` (1..65535) and
/// `format:` must come first, in that order; every field line must have
/// `field:`, `offset:` and `size:` (`signed:` is optional, default 0; any
/// other attribute is refused, as is an attribute given twice), a
/// declaration ending in an identifier, offset + size <= 65535, and no name
/// twice; the field list ends at a blank line or `print fmt:`; there must
/// be at least one field. Throws FormatError.
EventFormat parseFormat(std::string_view text);

/// Parses one `field:...` line (leading whitespace allowed). Throws
/// FormatError with line number `lineNumber`.
FormatField parseFieldLine(std::string_view line, std::size_t lineNumber = 1);

/// The ring buffer's sub-buffer (page) layout, from events/header_page:
/// offsets and sizes in bytes from the page's start.
struct PageFormat {
    std::uint32_t pageSize = 0; ///< dataOffset + dataSize: the bytes one read() returns
    std::uint32_t timestampOffset = 0, timestampSize = 0;
    std::uint32_t commitOffset = 0, commitSize = 0;
    std::uint32_t dataOffset = 0, dataSize = 0;
    bool operator==(const PageFormat&) const = default;
};

/// Parses events/header_page (field lines `timestamp`, `commit`, `data`,
/// others such as `overwrite` ignored). Throws FormatError if a field line
/// is malformed or one of the three is missing, or the data field does not
/// come after the other two.
PageFormat parseHeaderPage(std::string_view text);

} // namespace tracectl::kernel
