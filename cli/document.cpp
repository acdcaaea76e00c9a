// SPDX-License-Identifier: MIT
#include "document.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

namespace rdmactl::doc {

namespace {

const json* member(const json& obj, const char* key) {
    if (!obj.is_object())
        return nullptr;
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// "Natural" order of kernel names: runs of digits compare by value.
bool natural_less(std::string_view a, std::string_view b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (is_digit(a[i]) && is_digit(b[j])) {
            std::size_t ie = i, je = j;
            while (ie < a.size() && is_digit(a[ie]))
                ++ie;
            while (je < b.size() && is_digit(b[je]))
                ++je;
            std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
            while (na.size() > 1 && na.front() == '0')
                na.remove_prefix(1);
            while (nb.size() > 1 && nb.front() == '0')
                nb.remove_prefix(1);
            if (na.size() != nb.size())
                return na.size() < nb.size();
            if (na != nb)
                return na < nb;
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j])
                return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

std::vector<const json*> pointers(const json& items) {
    std::vector<const json*> out;
    for (const auto& item : items)
        if (item.is_object())
            out.push_back(&item);
    return out;
}

} // namespace

std::string str(const json& obj, const char* key) {
    const json* v = member(obj, key);
    return v && v->is_string() ? v->get<std::string>() : std::string();
}

bool boolean(const json& obj, const char* key) {
    const json* v = member(obj, key);
    return v && v->is_boolean() && v->get<bool>();
}

std::int64_t integer(const json& obj, const char* key, std::int64_t fallback) {
    const json* v = member(obj, key);
    return v && v->is_number_integer() ? v->get<std::int64_t>() : fallback;
}

double number(const json& obj, const char* key, double fallback) {
    const json* v = member(obj, key);
    return v && v->is_number() ? v->get<double>() : fallback;
}

std::vector<std::string> strings(const json& obj, const char* key) {
    std::vector<std::string> out;
    for (const auto& v : array(obj, key))
        if (v.is_string())
            out.push_back(v.get<std::string>());
    return out;
}

const json& array(const json& obj, const char* key) {
    static const json empty = json::array();
    const json* v = member(obj, key);
    return v && v->is_array() ? *v : empty;
}

std::vector<const json*> devices(const json& doc) {
    auto out = pointers(array(doc, "Devices"));
    std::stable_sort(out.begin(), out.end(), [](const json* a, const json* b) {
        return natural_less(str(*a, "Name"), str(*b, "Name"));
    });
    return out;
}

std::vector<const json*> links(const json& doc) {
    auto out = pointers(array(doc, "Links"));
    std::stable_sort(out.begin(), out.end(), [](const json* a, const json* b) {
        return integer(*a, "Index") < integer(*b, "Index");
    });
    return out;
}

std::vector<const json*> ports(const json& device) {
    auto out = pointers(array(device, "Ports"));
    std::stable_sort(out.begin(), out.end(), [](const json* a, const json* b) {
        return integer(*a, "Number") < integer(*b, "Number");
    });
    return out;
}

const json* find_by_path(const json& items, const std::string& path) {
    if (path.empty() || path == "/")
        return nullptr;
    for (const auto& item : items)
        if (str(item, "Path") == path)
            return &item;
    return nullptr;
}

std::string name_of(const json& doc, const std::string& path) {
    if (const json* d = find_by_path(array(doc, "Devices"), path))
        return str(*d, "Name");
    if (const json* l = find_by_path(array(doc, "Links"), path))
        return str(*l, "Name");
    return {};
}

std::string provider_text(const json& device) {
    std::string provider = str(device, "Provider");
    if (provider.empty())
        return {};
    return boolean(device, "ProviderInstalled") ? provider : provider + " (missing)";
}

std::string transport_text(const json& port) {
    std::string transport = str(port, "Transport");
    const auto versions = strings(port, "RoCEVersions");
    if (transport == "RoCE" && !versions.empty())
        transport += fmt::format(" {}", fmt::join(versions, ","));
    return transport;
}

std::string rate_text(const json& port) {
    const double rate = number(port, "RateGbps");
    if (rate < 0)
        return {};
    return fmt::format("{:g} Gb/s", rate);
}

} // namespace rdmactl::doc
