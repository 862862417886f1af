// Shared main for keyblend's benchmarks: runs Google Benchmark as usual, then prints each case's
// rate next to its plain reference's rate from the same run, and the ratio.
//
// Convention: every case reports one rate counter whose name ends in "/s" (tracks/s, joints/s,
// M vertices/s, ...). A program passes a function that names, for a case, the reference case it
// is compared with (empty: none).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kbbench {

using reference_of_fn = std::function<std::string(const std::string& name)>;

class ratio_reporter : public benchmark::ConsoleReporter {
public:
    explicit ratio_reporter(reference_of_fn reference_of) : reference_of_(std::move(reference_of)) {}

    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& run : runs) {
            if (run.error_occurred) continue;
            const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
            if (run.run_type == Run::RT_Aggregate && !median) continue;
            for (const auto& [counter, value] : run.counters) {
                if (counter.size() < 2 || counter.compare(counter.size() - 2, 2, "/s") != 0) continue;
                const std::string name = run.run_name.str();
                if (median || !rates_.count(name)) {
                    if (!rates_.count(name)) order_.push_back(name);
                    rates_[name] = {counter, value.value};
                }
                break;
            }
        }
    }

    void Finalize() override {
        ConsoleReporter::Finalize();
        std::FILE* out = stdout;
        std::fprintf(out, "\nRatios against the plain reference, measured in this run:\n");
        std::fprintf(out, "%-48s %16s %16s %8s\n", "case", "rate", "reference", "ratio");
        for (const std::string& name : order_) {
            const auto& [counter, rate] = rates_[name];
            const std::string ref = reference_of_(name);
            const auto found = rates_.find(ref);
            if (ref.empty() || ref == name || found == rates_.end()) {
                std::fprintf(out, "%-48s %12.4g %s\n", name.c_str(), rate, counter.c_str());
                continue;
            }
            std::fprintf(out, "%-48s %12.4g %s %12.4g %s %7.2fx\n", name.c_str(), rate,
                         counter.c_str(), found->second.second, found->second.first.c_str(),
                         rate / found->second.second);
        }
        std::fflush(out);
    }

private:
    reference_of_fn reference_of_;
    std::map<std::string, std::pair<std::string, double>> rates_;
    std::vector<std::string> order_;
};

inline int run(int argc, char** argv, reference_of_fn reference_of) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    ratio_reporter reporter(std::move(reference_of));
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}

} // namespace kbbench
