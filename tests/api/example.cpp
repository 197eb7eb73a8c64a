// example.cpp - a C++ program against the installed libmdsd (tests/test_api.c).
#include <cstdio>
#include <vector>

#include <mdsd/mdsd.h>

int main()
{
    std::vector<double> p = {0.4, 0.3, 0.2, 0.1}, q = {0.1, 0.2, 0.3, 0.4};
    mdsd_scheme wor = {MDSD_SCHEME_WOR, 2, p.size(), q.data(), nullptr};
    mdsd_alpha_result sort{}, lp{};
    mdsd_err err;
    if (mdsd_alpha(p.data(), &wor, MDSD_ALPHA_SORT, nullptr, &sort, nullptr, &err) ||
        mdsd_alpha(p.data(), &wor, MDSD_ALPHA_LP_FULL, nullptr, &lp, nullptr, &err)) {
        std::fprintf(stderr, "mdsd: %s\n", err.msg);
        return 1;
    }
    std::printf("mdsd %s: alpha*(wor, n = 2) sort %.17g, lp-full %.17g\n", mdsd_version(),
                sort.alpha, lp.alpha);
    double d = sort.alpha - lp.alpha;
    return d < 1e-7 && d > -1e-7 ? 0 : 1;
}
