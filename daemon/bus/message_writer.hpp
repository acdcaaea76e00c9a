// SPDX-License-Identifier: MIT
//
// ValueWriter (inventory/value_writer.hpp) into an sd-bus message: what the property tables
// write becomes the D-Bus wire format (sd_bus_message_append_basic(3),
// sd_bus_message_open_container(3)). A failure throws std::system_error with sd-bus's errno.
#pragma once

#include "inventory/value_writer.hpp"

#include <systemd/sd-bus.h>

namespace rdmad {

class MessageWriter final : public ValueWriter {
  public:
    explicit MessageWriter(sd_bus_message* m) : m_(m) {}
    void string(const std::string& s) override;
    void object_path(const std::string& path) override;
    void boolean(bool b) override;
    void byte(uint8_t n) override;
    void u16(uint16_t n) override;
    void i32(int32_t n) override;
    void u32(uint32_t n) override;
    void f64(double d) override;
    void begin_array(const char* element) override;
    void end_array() override;
    void begin_struct(const char* contents) override;
    void field(const char*) override {}
    void end_struct() override;

  private:
    void check(int r);
    sd_bus_message* m_;
};

} // namespace rdmad
