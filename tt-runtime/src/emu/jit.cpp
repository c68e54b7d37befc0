// Kernel JIT: wraps a kernel's source with its compile-time args and defines, compiles it with the
// host C++ compiler against the stand-in kernel API headers, caches the shared object on disk by a
// hash of everything that goes into it but the kernel's name, and loads it.
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "emu.hpp"

#ifndef TTR_EMU_INCLUDE_DIR
#error "build.rs defines TTR_EMU_INCLUDE_DIR"
#endif
#ifndef TTR_EMU_HEADERS_HASH
#error "build.rs defines TTR_EMU_HEADERS_HASH"
#endif

namespace ttr {

KernelLib::~KernelLib() {
    if (handle != nullptr) {
        dlclose(handle);
    }
}

namespace {

const char *const COMPILER_FLAGS = "-std=c++17 -O2 -fPIC -shared -fvisibility=hidden -fno-strict-aliasing";

std::mutex g_cache_mu;
std::unordered_map<std::string, std::weak_ptr<KernelLib>> g_loaded;
// One lock per kernel key while it is compiled or loaded, so that threads loading the same kernel
// (programs loaded on several devices at once) compile it once and the others wait for it.
std::unordered_map<std::string, std::shared_ptr<std::mutex>> g_building;

uint64_t fnv1a(const std::string &s, uint64_t seed) {
    uint64_t h = seed;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

bool is_identifier(const std::string &s) {
    if (s.empty() || (s[0] >= '0' && s[0] <= '9')) {
        return false;
    }
    for (char c : s) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!ok) {
            return false;
        }
    }
    return true;
}

std::string env_or(const char *name, const std::string &fallback) {
    const char *v = getenv(name);
    return v != nullptr && v[0] != '\0' ? std::string(v) : fallback;
}

std::string cache_dir() {
    if (const char *v = getenv("TTR_KERNEL_CACHE"); v != nullptr && v[0] != '\0') {
        return v;
    }
    if (const char *v = getenv("XDG_CACHE_HOME"); v != nullptr && v[0] != '\0') {
        return std::string(v) + "/tt-runtime/kernels";
    }
    if (const char *v = getenv("HOME"); v != nullptr && v[0] != '\0') {
        return std::string(v) + "/.cache/tt-runtime/kernels";
    }
    return "/tmp/tt-runtime-kernels";
}

void make_dirs(const std::string &path) {
    std::string partial;
    std::stringstream ss(path);
    std::string part;
    if (!path.empty() && path[0] == '/') {
        partial = "/";
    }
    while (std::getline(ss, part, '/')) {
        if (part.empty()) {
            continue;
        }
        partial += part + "/";
        if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
            throw HostError{TTR_ERR_INTERNAL, fmt("cannot create kernel cache directory %s: %s", partial.c_str(),
                                                  strerror(errno))};
        }
    }
}

std::string shell_quote(const std::string &s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    return out + "'";
}

// The source the host compiler builds: `b`'s kernel under the label `name`, which names it in
// diagnostics only.
std::string wrapper_source(const KernelBuild &b, const std::string &name) {
    std::ostringstream w;
    w << "// tt-runtime emulator kernel '" << name << "' (" << role_name(b.role) << ")\n";
    w << "#define TTR_CT_ARGS_LIST";
    for (uint32_t a : b.compile_args) {
        w << " " << a << "u,";
    }
    w << "\n#define TTR_CT_ARG_COUNT " << b.compile_args.size() << "\n";
    w << "#define KERNEL_COMPILE_TIME_ARGS";
    for (size_t i = 0; i < b.compile_args.size(); ++i) {
        w << (i == 0 ? " " : ",") << b.compile_args[i];
    }
    w << "\n#define ARCH_BLACKHOLE 1\n#define KERNEL_BUILD 1\n#define TTR_EMULATOR 1\n";
    w << "#define NUM_DRAM_BANKS " << DRAM_BANKS << "\n";
    if (b.role == TTR_ROLE_COMPUTE) {
        static const uint32_t FIDELITY_VALUES[4] = {0, 2, 3, 4};
        w << "#define COMPILE_FOR_TRISC 1\n#define MATH_FIDELITY " << FIDELITY_VALUES[b.fidelity & 3] << "\n";
        w << "#define DST_ACCUM_MODE " << (b.fp32_dest ? "true" : "false") << "\n";
        w << "#define APPROX " << (b.approx ? "true" : "false") << "\n#define DST_SYNC_MODE DstSync::SyncHalf\n";
    } else {
        w << (b.role == TTR_ROLE_READER ? "#define COMPILE_FOR_BRISC 1\n" : "#define COMPILE_FOR_NCRISC 1\n");
        w << "#define NOC_INDEX " << b.noc << "\n";
    }
    for (const auto &[name, value] : b.defines) {
        w << "#define " << name << " " << value << "\n";
    }
    std::string file = name;
    for (char &c : file) {
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
            c = '_';
        }
    }
    w << "#include \"ttr_emu/prelude.h\"\n#line 1 \"" << file << ".cpp\"\n";
    w << b.source << "\n#include \"ttr_emu/entry.h\"\n";
    return w.str();
}

std::string run_compiler(const std::string &compiler, const std::string &include, const std::string &src,
                         const std::string &out, int *status) {
    std::string cmd = compiler + " " + COMPILER_FLAGS + " -I" + shell_quote(include) + " -o " + shell_quote(out) +
                      " " + shell_quote(src) + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    if (p == nullptr) {
        throw HostError{TTR_ERR_INTERNAL, fmt("cannot run the kernel compiler: %s", strerror(errno))};
    }
    std::string output;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
        output.append(buf, n);
    }
    *status = pclose(p);
    return output;
}

std::shared_ptr<KernelLib> open_lib(const std::string &path) {
    auto lib = std::make_shared<KernelLib>();
    lib->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib->handle == nullptr) {
        const char *e = dlerror();
        throw HostError{TTR_ERR_INTERNAL, fmt("cannot load kernel %s: %s", path.c_str(), e != nullptr ? e : "?")};
    }
    auto version = reinterpret_cast<uint32_t (*)()>(dlsym(lib->handle, "ttr_kernel_abi_version"));
    lib->run = reinterpret_cast<void (*)(const ttr_emu::Abi *)>(dlsym(lib->handle, "ttr_kernel_run"));
    if (version == nullptr || lib->run == nullptr || version() != TTR_EMU_ABI_VERSION) {
        throw HostError{TTR_ERR_INTERNAL, fmt("kernel %s does not match the emulator's ABI", path.c_str())};
    }
    return lib;
}

}  // namespace

std::shared_ptr<KernelLib> load_kernel(const KernelBuild &build) {
    for (const auto &[name, value] : build.defines) {
        if (!is_identifier(name)) {
            throw HostError{TTR_ERR_INVALID_ARGUMENT, fmt("define name '%s' is not an identifier", name.c_str())};
        }
        if (value.find('\n') != std::string::npos) {
            throw HostError{TTR_ERR_INVALID_ARGUMENT, fmt("define %s has a newline in its value", name.c_str())};
        }
    }
    const std::string compiler = env_or("TTR_CXX", env_or("CXX", "g++"));
    const std::string include = env_or("TTR_EMU_INCLUDE", TTR_EMU_INCLUDE_DIR);
    const std::string source = wrapper_source(build, build.name);
    // The key leaves the kernel's name out: the steps and programs that run one kernel file
    // with the same compile-time args and config share one object.
    const std::string keyed = wrapper_source(build, "kernel") + "\n" + COMPILER_FLAGS + "\n" + compiler + "\n" + include + "\n" +
                              TTR_EMU_HEADERS_HASH + "\n" + std::to_string(TTR_EMU_ABI_VERSION);
    const std::string key = fmt("%016llx%016llx", static_cast<unsigned long long>(fnv1a(keyed, 0xcbf29ce484222325ull)),
                                static_cast<unsigned long long>(fnv1a(keyed, 0x84222325cbf29ce4ull)));
    std::shared_ptr<std::mutex> building;
    {
        std::lock_guard<std::mutex> lock(g_cache_mu);
        auto it = g_loaded.find(key);
        if (it != g_loaded.end()) {
            if (auto lib = it->second.lock()) {
                return lib;
            }
        }
        auto &slot = g_building[key];
        if (!slot) {
            slot = std::make_shared<std::mutex>();
        }
        building = slot;
    }
    std::lock_guard<std::mutex> build_lock(*building);
    {
        std::lock_guard<std::mutex> lock(g_cache_mu);
        auto it = g_loaded.find(key);
        if (it != g_loaded.end()) {
            if (auto lib = it->second.lock()) {
                return lib;
            }
        }
    }
    const std::string dir = cache_dir();
    const std::string so_path = dir + "/" + key + ".so";
    struct stat st;
    if (stat(so_path.c_str(), &st) != 0) {
        make_dirs(dir);
        std::ostringstream tmp;
        tmp << dir << "/" << key << "." << getpid() << "." << std::hash<std::thread::id>{}(std::this_thread::get_id());
        const std::string src_path = tmp.str() + ".cpp";
        const std::string tmp_so = tmp.str() + ".so";
        {
            std::ofstream f(src_path);
            f << source;
            if (!f) {
                throw HostError{TTR_ERR_INTERNAL, fmt("cannot write %s", src_path.c_str())};
            }
        }
        int status = 0;
        std::string output = run_compiler(compiler, include, src_path, tmp_so, &status);
        if (status != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            unlink(src_path.c_str());
            unlink(tmp_so.c_str());
            if (output.size() > 6000) {
                output = output.substr(0, 6000) + "\n[... truncated]";
            }
            throw HostError{TTR_ERR_COMPILE, fmt("kernel '%s' (%s) failed to compile:\n", build.name.c_str(),
                                                 role_name(build.role)) +
                                                 output};
        }
        unlink(src_path.c_str());
        if (rename(tmp_so.c_str(), so_path.c_str()) != 0) {
            unlink(tmp_so.c_str());
            throw HostError{TTR_ERR_INTERNAL, fmt("cannot store %s: %s", so_path.c_str(), strerror(errno))};
        }
    }
    auto lib = open_lib(so_path);
    std::lock_guard<std::mutex> lock(g_cache_mu);
    g_loaded[key] = lib;
    return lib;
}

}  // namespace ttr
