// SPDX-License-Identifier: MIT
//
// Where a property's value goes: one interface, written to by the property tables
// (inventory/properties.hpp) and implemented twice, by an sd-bus message (bus/message_writer.hpp,
// the D-Bus wire format) and by Describe()'s JSON (bus/describe.cpp). A property is written
// once, in its table row, and both outputs follow from it.
#pragma once

#include <cstdint>
#include <string>

namespace rdmad {

class ValueWriter {
  public:
    virtual ~ValueWriter() = default;
    /// 's': valid UTF-8 (the tables apply the text rules of util/text.hpp first).
    virtual void string(const std::string& s) = 0;
    /// 'o': a valid object path.
    virtual void object_path(const std::string& path) = 0;
    virtual void boolean(bool b) = 0;  ///< 'b'
    virtual void byte(uint8_t n) = 0;  ///< 'y'
    virtual void u16(uint16_t n) = 0;  ///< 'q'
    virtual void i32(int32_t n) = 0;   ///< 'i'
    virtual void u32(uint32_t n) = 0;  ///< 'u'
    virtual void f64(double d) = 0;    ///< 'd'
    /// An array of `element` (a complete D-Bus signature), then its elements, then end_array().
    virtual void begin_array(const char* element) = 0;
    virtual void end_array() = 0;
    /// A struct with the members `contents` (e.g. "usss"): field(name) before each member
    /// (Describe() makes the struct a JSON object with those keys), then end_struct().
    virtual void begin_struct(const char* contents) = 0;
    virtual void field(const char* name) = 0;
    virtual void end_struct() = 0;
};

} // namespace rdmad
