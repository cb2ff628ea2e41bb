// The only doctest main of the test suite.
//
// CTest runs a suite one source file at a time (`--source-file=*/integration/limits.cpp`,
// tests/CMakeLists.txt), so a filter that matches no test case would pass while testing
// nothing: a renamed or emptied file, a pattern that no longer fits. A run that selects no
// test case therefore fails, saying so. Queries (--list-test-cases, --count, --help) are
// answered as doctest answers them.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>  // std::fprintf

namespace {

unsigned cases_selected = 0;  // test cases that passed the filters, seen at the run's end

// A listener that only reads the run's totals; every other event is ignored.
struct selection_listener : doctest::IReporter {
    explicit selection_listener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats& stats) override {
        cases_selected = stats.numTestCasesPassingFilters;
    }
    void test_case_start(const doctest::TestCaseData&) override {}
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};
DOCTEST_REGISTER_LISTENER("selection", 1, selection_listener);

} // namespace

int main(int argc, char** argv) {
    doctest::Context context(argc, argv);
    int result = context.run();
    if (context.shouldExit() || result != 0) return result;
    if (cases_selected == 0) {
        std::fprintf(stderr, "no test case matched the filters: nothing was tested\n");
        return 1;
    }
    return result;
}
