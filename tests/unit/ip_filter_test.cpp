#include "filter/filter_error.hpp"
#include "ip/ip_filter.hpp"

#include <gtest/gtest.h>
#include <linux/types.h>

using tracectl::ip::compileIpFilter;

TEST(IpFilter, Empty) {
    EXPECT_EQ(compileIpFilter({}).filter.n_conj, 0U);
}
