// Errors as values: every fallible core call returns Result<T>. An Error carries one line a
// person can act on (file, line, option, value); exceptions never leave the core library.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace xpart {

struct Error {
    std::string message;
};

// Builds the conventional message: "<file>:<line>: <what>" (line omitted when 0).
Error file_error(const std::string& file, unsigned line, const std::string& what);
// "<what>: <strerror(err)>", for a failed system call (pass errno as it was right after it).
Error errno_error(const std::string& what, int err);

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error error) : v_(std::move(error)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(v_); }
    const T& value() const& { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

// Result<void> equivalent.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace xpart
