// The test of src/metal/device_lost.hpp's classifier, run by scripts/metal-check.sh: each argument is a
// message prefixed with "hang:" (must be taken for a hung device) or "other:" (must not). Exits 1
// naming every message classified wrongly, 0 when all are right.
#include <cstdio>
#include <string>

#include "../../src/metal/device_lost.hpp"

int main(int argc, char **argv) {
    int wrong = 0;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        bool want;
        std::string message;
        if (arg.rfind("hang:", 0) == 0) {
            want = true;
            message = arg.substr(5);
        } else if (arg.rfind("other:", 0) == 0) {
            want = false;
            message = arg.substr(6);
        } else {
            std::fprintf(stderr, "device_lost_test: argument %d has neither a hang: nor an other: prefix\n", i);
            return 2;
        }
        if (ttr_metal::reports_hang(message) != want) {
            std::fprintf(stderr, "device_lost_test: \"%s\" %s\n", message.c_str(),
                         want ? "is a hang message but was not taken for one" : "was taken for a hang");
            ++wrong;
        }
    }
    return wrong == 0 ? 0 : 1;
}
