// keyblend — the command-line tool's shared parts: its options, a loaded model (from keyblend's
// .X, BVH or glTF loaders, assimp, or a package, one place), and the pose of the skeleton at a time.
// keyblend_tool.cpp has main, `info` and `pose`; render.cpp has `render`; pack.cpp has `pack` and
// packages as input; convert.cpp has `convert` (image.cpp decodes the DDS, BMP and TGA textures it
// converts to PNG); isolate.cpp runs assimp's imports in a process of their own.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <keyblend/blend.hpp>
#include <keyblend/bvh.hpp>
#include <keyblend/clip.hpp>
#include <keyblend/io/xfile.hpp>
#include <keyblend/package.hpp>
#include <keyblend/pose.hpp>
#ifdef KEYBLEND_TOOL_ASSIMP
#include <keyblend/assimp.hpp>
#endif
#ifdef KEYBLEND_TOOL_GLTF
#include <keyblend/gltf.hpp>
#endif

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tool {

constexpr int exit_ok = 0;
constexpr int exit_file = 1;
constexpr int exit_usage = 2;

/// Thrown for a wrong command line; main prints it (with the usage when the command line itself
/// is wrong, without when a name it gives is not in the file) and exits with 2.
struct usage_error {
    std::string message;
};

/// Which loader reads the file.
enum class importer { automatic, keyblend, assimp };

struct options {
    std::string command, file;
    bool json = false;
    bool strict = false; // --strict: the first problem the default load repairs or drops fails it
    bool vertices = false; // pose --json --vertices: every mesh instance's posed vertices
    importer from = importer::automatic;
    std::optional<double> tick, seconds;
    std::optional<std::string> set;
    std::vector<std::pair<std::string, float>> blend;
    // render
    std::optional<double> from_seconds, to_seconds;
    std::optional<int> frames;
    int width = 256, height = 256;
    bool bones = false;
    bool progress = false; // a progress line even when stderr is not a terminal
    std::string out;
    // The limits of an assimp import's process (isolate.cpp): address space and seconds.
    std::size_t max_memory_mib = 1024;
    double max_seconds = 10.0;
    // pack
    std::optional<double> precision, shell;
    // convert: every input (`file` is the first, or the one being converted), -o or --out-dir,
    // --format glb|gltf (with --out-dir), --handedness left|right (default: by the input's format)
    std::vector<std::string> inputs;
    std::string out_dir;
    std::string format = "glb";
    std::optional<std::string> handedness;
};

/// A file loaded by either importer. The object is not copied or moved once loaded (it is
/// handed around by reference), so the pointers into it stay valid.
struct model {
    std::string path;
    /// "keyblend" or "assimp".
    const char* importer_name = "keyblend";
    std::unique_ptr<keyblend::io::xfile> x;
    std::unique_ptr<keyblend::io::bvh> b;
#ifdef KEYBLEND_TOOL_ASSIMP
    std::unique_ptr<keyblend::assimp::scene> a;
#endif
#ifdef KEYBLEND_TOOL_GLTF
    std::unique_ptr<keyblend::gltf::model> g;
#endif
    /// The loaded file's skeleton and its clips (animation sets), whichever importer read it.
    const keyblend::skeleton* skeleton = nullptr;
    std::vector<const keyblend::clip*> clips;
    /// The importer's warnings (io::load_warning is an error with what the load did about it).
    std::vector<keyblend::error> warnings;
    /// A package (pack.cpp): its bytes, the skeleton built from it, its compressed clips,
    /// each one's plain clip without channels (name, times, events: what `clips` points to) and
    /// its meshes as io::meshes.
    std::unique_ptr<keyblend::package_file> package;
    std::unique_ptr<keyblend::skeleton> package_skeleton;
    std::vector<keyblend::compressed_clip> compressed;
    std::vector<keyblend::clip> package_clips;
    std::vector<keyblend::io::mesh> package_meshes;

    /// Calls f(mesh) for every mesh (io::xfile_mesh or assimp::mesh, which share their members).
    template <class F>
    void for_each_mesh(F&& f) const {
        if (x)
            for (const auto& m : x->meshes) f(m);
#ifdef KEYBLEND_TOOL_ASSIMP
        if (a)
            for (const auto& m : a->meshes) f(m);
#endif
        for (const auto& m : package_meshes) f(m);
#ifdef KEYBLEND_TOOL_GLTF
        if (g)
            for (const auto& m : g->meshes) f(m);
#endif
    }
    std::size_t mesh_count() const {
        std::size_t n = 0;
        for_each_mesh([&](const auto&) { ++n; });
        return n;
    }
};

/// True when the model's coordinates are left-handed: a .X file read by keyblend's loader (assimp
/// mirrors .X files into its right-handed space; glTF, BVH and packages are taken as
/// right-handed). render draws such a model mirrored along z, and convert writes it so, so that
/// both show it as Direct3D did.
bool is_left_handed(const model& m);

/// Loads o.file with the importer o.from chooses: unless --importer assimp, keyblend's .X loader
/// for files that start with an .X header (`xof `), its glTF loader for .gltf / .glb files (by their
/// contents) and its BVH reader for files named *.bvh or starting with HIERARCHY; assimp for every
/// other file (when the tool is built with it). On
/// failure prints the error and returns null (exit 1 follows).
std::unique_ptr<model> load_model(const options& o);

/// The extension of a file name, lower case and without its dot ("glb" for "Man.GLB"): what
/// follows the last '.', or nothing.
std::string extension_of(const std::string& path);

/// True when load_model reads o.file with assimp (the tool is built with it, and --importer
/// assimp or a file none of keyblend's loaders reads).
bool reads_with_assimp(const options& o);

/// Runs `command` (the whole command: load_model, then info, pose or render) where a crash of
/// assimp's importer cannot take the tool down: on POSIX systems in a child process with
/// o.max_memory_mib of address space and o.max_seconds for the import, reporting a crash, an
/// assertion or an exhausted limit as an error naming the file and the importer (exit 1); in the
/// tool's own process elsewhere. Returns the exit code. See isolate.cpp.
int run_isolated(const options& o, int (*command)(const options&));

/// Called by load_model when assimp's import is over: the child's memory limit is lifted and the
/// time limit stops (the command itself is not limited). Does nothing outside run_isolated.
void import_done();

/// The clip named `name` (without regard to case), or a usage error listing the file's clips.
const keyblend::clip& find_clip(const model& m, const std::string& name);

/// A computed pose must be finite: a file whose values are each finite can still overflow float
/// when they are multiplied (3e38 scales, matrices far from the origin). Returns a message naming
/// the first joint (parents first) whose local or model matrix holds NaN or infinity, or nothing.
std::optional<std::string> non_finite_joint(const keyblend::skeleton& s, const std::vector<glm::mat4>& local,
                                            const std::vector<glm::mat4>& model);

/// The tick for a clip: o.tick as given, or `seconds` times the clip's ticks per second.
float tick_for(const options& o, const keyblend::clip& c);

/// Every joint's local matrix for the sets the options name at `seconds` (or o.tick / o.seconds
/// when `seconds` is empty): one set (--set) sampled by sample_local_matrices, or the bind pose
/// plus each --blend set's weighted difference from it (blend_matrix_additive). With `wrap`, each
/// clip's time is wrapped by its wrap mode (clip_time) first. What `pose` prints and `render` draws.
keyblend::status local_matrices(const model& m, const options& o, std::optional<double> seconds,
                                bool wrap, std::vector<glm::mat4>& local);

/// The model matrices of local matrices from local_matrices (a local_to_model_job); `model` is
/// sized to the skeleton.
void model_matrices(const keyblend::skeleton& s, const std::vector<glm::mat4>& local, std::vector<glm::mat4>& model);
/// Every morph weight of the skeleton (local_pose::morph_weights' layout) for the sets the options
/// name, as local_matrices samples them: one set's weights, or the bind weights plus each --blend
/// set's weighted difference from them. Empty when the skeleton has none.
void morph_weights(const model& m, const options& o, std::optional<double> seconds, bool wrap,
                   std::vector<float>& weights);

/// The weights of `mesh`'s morph targets among `weights` (morph_weights' layout): its joint's.
template <class Mesh>
keyblend::span<const float> mesh_morph_weights(const model& m, const Mesh& mesh, const std::vector<float>& weights) {
    const keyblend::skeleton& s = *m.skeleton;
    if (mesh.joint >= s.size() || s.morph_weight_count(mesh.joint) == 0) return {};
    return keyblend::span<const float>(weights).subspan(s.morph_weight_offset(mesh.joint), s.morph_weight_count(mesh.joint));
}

/// `keyblend render`: see render.cpp.
int render(const options& o, const model& m, double load_ms);

// Packages (pack.cpp).
/// True when the file starts with a package's magic.
bool has_package_magic(const std::string& path);
/// Reads a package; on failure prints the error and returns null.
std::unique_ptr<model> load_package(const options& o);
/// The compressed clip behind one of a package's clips (model::clips), or null for other clips.
const keyblend::compressed_clip* compressed_of(const model& m, const keyblend::clip& c);
/// A compressed clip's local matrices at `tick` (joints it does not store keep their bind
/// matrices), or with `blend` its weighted difference from the bind pose added to `local`, as
/// sample_local_matrices and blend_matrix_additive do for plain clips.
keyblend::status compressed_local_matrices(const keyblend::compressed_clip& c, const keyblend::skeleton& s, float tick,
                                           float weight, bool blend, std::vector<glm::mat4>& local);
/// The model's height: the largest extent of its bind-pose skinned meshes (of its joints when it
/// has none); 1 cm-eq is a 180th of it.
double model_height(const model& m);
/// The model's meshes as io::meshes, for the writers (write_package, gltf::write): the loaders'
/// own where they are io::meshes, otherwise copies of the members they share, kept in `copies`.
std::vector<const keyblend::io::mesh*> io_meshes(const model& m, std::vector<keyblend::io::mesh>& copies);

/// `keyblend convert`: see convert.cpp. Loads each input (through run_isolated where assimp
/// reads it) and writes it as glTF; returns 1 when any input failed, the others still written.
int convert(const options& o);

/// `keyblend pack` and `keyblend info` on a package.
int pack(const options& o, const model& m);
int info_package(const options& o, const model& m);

} // namespace tool
