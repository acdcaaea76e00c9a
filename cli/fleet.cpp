// SPDX-License-Identifier: MIT
//
// One child process per host rather than a thread: a Client over ssh redirects the process's
// fd 2 while sd-bus starts ssh (client.cpp), and sdbus-c++ finishes the D-Bus handshake inside
// the connection's constructor, so threads would have to take turns for the whole handshake.
// A child has its own fd 2, and a host that does not answer in time is killed with its ssh.
#include "fleet.hpp"

#include "table.hpp"

#include <fmt/core.h>
#include <sdbus-c++/Error.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rdmactl {

namespace {

// In the child: the answer as one JSON document, {"value": ...} or {"error": "..."}.
std::string ask_one(const std::string& host, const std::function<nlohmann::json(Client&)>& ask) {
    nlohmann::json answer;
    // Every exception stays in its child: one host's failure is its own line.
    try {
        Client client(host);
        answer["value"] = ask(client);
    } catch (const Failure& e) {
        answer = {{"error", e.what()}};
    } catch (const sdbus::Error& e) {
        answer = {{"error", error_message(e)}};
    } catch (const std::exception& e) {
        answer = {{"error", sanitize(e.what())}};
    } catch (...) {
        answer = {{"error", "unexpected error"}};
    }
    return answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void write_all(int fd, const std::string& text) {
    std::size_t at = 0;
    while (at < text.size()) {
        const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        at += static_cast<std::size_t>(n);
    }
}

struct Child {
    pid_t pid = -1;
    int fd = -1;
    std::string text;
    bool eof = false;
};

} // namespace

std::vector<HostAnswer> ask_hosts(const std::vector<std::string>& hosts,
                                  const std::function<nlohmann::json(Client&)>& ask,
                                  std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<HostAnswer> answers(hosts.size());
    std::vector<Child> children(hosts.size());
    std::fflush(stdout); // nothing buffered is written twice by a child
    std::fflush(stderr);
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        answers[i].host = hosts[i];
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) < 0) {
            answers[i].error =
                fmt::format("cannot ask {}: pipe: {}", sanitize(hosts[i]), std::strerror(errno));
            children[i].eof = true;
            continue;
        }
        const pid_t parent = ::getpid();
        const pid_t pid = ::fork();
        if (pid == 0) {
            // Its own process group: on a timeout, the parent kills it with its ssh. It dies
            // with the parent (killed, or Ctrl-C, which reaches only the foreground group),
            // and never outlives the deadline by more than a few seconds on its own.
            ::setpgid(0, 0);
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent)
                ::_exit(1);
            ::alarm(static_cast<unsigned>(
                std::chrono::duration_cast<std::chrono::seconds>(timeout).count() + 5));
            ::close(fds[0]);
            write_all(fds[1], ask_one(hosts[i], ask));
            ::_exit(0);
        }
        ::close(fds[1]);
        if (pid < 0) {
            answers[i].error =
                fmt::format("cannot ask {}: fork: {}", sanitize(hosts[i]), std::strerror(errno));
            ::close(fds[0]);
            children[i].eof = true;
            continue;
        }
        ::setpgid(pid, pid); // also here: no race with the kill below
        children[i].pid = pid;
        children[i].fd = fds[0];
    }

    // Read every child's answer until it closes its pipe or the deadline passes.
    while (true) {
        std::vector<pollfd> pfds;
        std::vector<std::size_t> index;
        for (std::size_t i = 0; i < children.size(); ++i)
            if (!children[i].eof) {
                pfds.push_back({children[i].fd, POLLIN, 0});
                index.push_back(i);
            }
        if (pfds.empty())
            break;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            break;
        const int n = ::poll(pfds.data(), pfds.size(), static_cast<int>(left.count()) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        for (std::size_t k = 0; k < pfds.size(); ++k) {
            if (pfds[k].revents == 0)
                continue;
            Child& c = children[index[k]];
            char buf[65536];
            const ssize_t got = ::read(c.fd, buf, sizeof buf);
            if (got > 0)
                c.text.append(buf, static_cast<std::size_t>(got));
            else if (got == 0 || errno != EINTR)
                c.eof = true;
        }
    }

    const auto ms = timeout.count();
    for (std::size_t i = 0; i < children.size(); ++i) {
        Child& c = children[i];
        if (c.pid < 0)
            continue;
        if (!c.eof) {
            ::kill(-c.pid, SIGKILL);
            answers[i].error =
                ms % 1000 == 0
                    ? fmt::format("no answer from {} within {} s", sanitize(hosts[i]), ms / 1000)
                    : fmt::format("no answer from {} within {} ms", sanitize(hosts[i]), ms);
        }
        ::close(c.fd);
        int status = 0;
        while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (!c.eof)
            continue;
        try {
            const nlohmann::json answer = nlohmann::json::parse(c.text);
            if (answer.contains("error"))
                answers[i].error = answer["error"].get<std::string>();
            else
                answers[i].value = answer.at("value");
        } catch (const nlohmann::json::exception&) {
            answers[i].error = WIFSIGNALED(status)
                                   ? fmt::format("asking {} was killed by signal {}",
                                                 sanitize(hosts[i]), WTERMSIG(status))
                                   : fmt::format("asking {} gave no answer", sanitize(hosts[i]));
        }
    }
    return answers;
}

std::string host_error(const std::string& host, const std::string& message) {
    const std::string name = sanitize(host);
    if (message.find(" " + name + " ") != std::string::npos)
        return message;
    return name + ": " + message;
}

} // namespace rdmactl
