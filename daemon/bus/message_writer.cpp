// SPDX-License-Identifier: MIT
#include "bus/message_writer.hpp"

#include <system_error>

namespace rdmad {

void MessageWriter::check(int r) {
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "cannot build the D-Bus message");
}

void MessageWriter::string(const std::string& s) {
    check(sd_bus_message_append_basic(m_, 's', s.c_str()));
}
void MessageWriter::object_path(const std::string& path) {
    check(sd_bus_message_append_basic(m_, 'o', path.c_str()));
}
void MessageWriter::boolean(bool b) {
    const int v = b; // 'b' is marshalled from an int (sd_bus_message_append_basic(3))
    check(sd_bus_message_append_basic(m_, 'b', &v));
}
void MessageWriter::byte(uint8_t n) { check(sd_bus_message_append_basic(m_, 'y', &n)); }
void MessageWriter::u16(uint16_t n) { check(sd_bus_message_append_basic(m_, 'q', &n)); }
void MessageWriter::i32(int32_t n) { check(sd_bus_message_append_basic(m_, 'i', &n)); }
void MessageWriter::u32(uint32_t n) { check(sd_bus_message_append_basic(m_, 'u', &n)); }
void MessageWriter::f64(double d) { check(sd_bus_message_append_basic(m_, 'd', &d)); }
void MessageWriter::begin_array(const char* element) {
    check(sd_bus_message_open_container(m_, 'a', element));
}
void MessageWriter::end_array() { check(sd_bus_message_close_container(m_)); }
void MessageWriter::begin_struct(const char* contents) {
    check(sd_bus_message_open_container(m_, 'r', contents));
}
void MessageWriter::end_struct() { check(sd_bus_message_close_container(m_)); }

} // namespace rdmad
