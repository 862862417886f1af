// keyblend — umbrella header: the whole core (everything but io/ and the adapters).
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
#include "motion.hpp"
#include "package.hpp"
#include "player.hpp"
#include "pose.hpp"
#include "sample.hpp"
#include "skeleton.hpp"
#include "skin.hpp"
#include "track.hpp"
