// A crowd: N characters of one model, each at its own time, each frame sampling 3 playing sets,
// blending them (3 weighted layers), local-to-model, and skinning its mesh (positions + normals)
// with its palette computed by the skinning job (skinning_job::bones: the crowd keeps no palette).
// Testwuson.X from the test data (KEYBLEND_DATA_DIR/assimp: 39 joints, 3205 vertices, 4 influences
// per vertex, sets Run and Walk); a generated character of the same sizes, named "generated", when
// the file is absent.
//
//   crowd/<model>/frame/<N>/1_thread     N characters' frame, one thread
//   crowd/<model>/frame/<N>/2_threads    the same split over 2 threads (the characters in two
//                                        halves, a persistent worker spinning between frames)
//   crowd/<model>/stage/<stage>          one stage of the frame for 64 characters, one thread:
//                                        sample (3 sets), blend, local_to_model, palette, skin,
//                                        and two stages in one job: palette_skin (the palette
//                                        computed by the skinning job), local_to_model_palette
//                                        (by the local-to-model job)
//   crowd/machine/read, crowd/machine/write   one thread's memory bandwidth (256 MB read or
//                                        written), beside which the frames' written mesh
//                                        (output bytes/s) is read
//
// Rates are characters/s (the frames also give output bytes/s; the machine rows bytes/s). The
// 2-thread frames are compared with the 1-thread ones (the ratio is the speed-up of the second
// core), and after the table the program prints how many characters fit in a 60 Hz frame (16.7 ms)
// on 2 cores, the bandwidth their mesh takes against the machine's, and the time per character of
// each stage.
#include "crowd.hpp"

namespace {

using namespace kbcrowd;

void register_all() {
    const std::string prefix = "crowd/" + the_model().name + "/";
    for (std::size_t n : crowd_sizes) {
        benchmark::RegisterBenchmark((prefix + "frame/" + std::to_string(n) + "/1_thread").c_str(), bm_frame, n, 1, normals::floats)
            ->UseRealTime();
        benchmark::RegisterBenchmark((prefix + "frame/" + std::to_string(n) + "/2_threads").c_str(), bm_frame, n, 2, normals::floats)
            ->UseRealTime();
    }
    for (int s = 0; s < int(stage_count + fused_stage_count); ++s)
        benchmark::RegisterBenchmark((prefix + "stage/" + stage_names[s]).c_str(), bm_stage, s, rotations::as_loaded);
    register_bandwidth();
}

} // namespace

int main(int argc, char** argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    crowd_reporter reporter([](const std::string& full) {
        // 2 threads against 1 thread: the second core's speed-up.
        const std::string name = without_real_time(full), two = "/2_threads";
        if (name.size() > two.size() && name.compare(name.size() - two.size(), two.size(), two) == 0)
            return name.substr(0, name.size() - two.size()) + "/1_thread/real_time";
        return std::string();
    });
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
