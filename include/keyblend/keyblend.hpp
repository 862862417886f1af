// keyblend — umbrella header: the whole core (everything but the loaders and the adapters).
//
// SPDX-License-Identifier: MIT
#pragma once

#include "blend.hpp"
#include "clip.hpp"
#include "compress.hpp"
#include "error.hpp"
#include "ik.hpp"
#include "key.hpp"
#include "math.hpp"
#include "morph.hpp"
#include "motion.hpp"
#include "package.hpp"
#include "player.hpp"
#include "pose.hpp"
#include "sample.hpp"
#include "skeleton.hpp"
#include "skin.hpp"
#include "track.hpp"
// Last: with KEYBLEND_KERNELS_IMPLEMENTATION it defines the jobs' run() (kernels.hpp).
#include "kernels.hpp"
