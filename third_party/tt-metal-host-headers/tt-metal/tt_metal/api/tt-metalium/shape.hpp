// SPDX-FileCopyrightText: © 2024 Tenstorrent USA, Inc.
//
// SPDX-License-Identifier: Apache-2.0

#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>

#include <fmt/core.h>

#include <tt-metalium/shape_base.hpp>
#include <tt_stl/small_vector.hpp>

namespace tt::tt_metal {

class Shape final : protected ShapeBase {
public:
    using ShapeBase::ShapeBase;
    using ShapeBase::operator[];
    using ShapeBase::begin;
    using ShapeBase::cbegin;
    using ShapeBase::cend;
    using ShapeBase::Container;
    using ShapeBase::coord_type;
    using ShapeBase::empty;
    using ShapeBase::end;
    using ShapeBase::size;
    using ShapeBase::view;

    template <std::size_t N>
    bool operator==(const std::array<uint32_t, N>& other) const {
        const bool sameSize = value_.size() == N;
        return sameSize && std::equal(value_.begin(), value_.end(), other.begin());
    }

    bool operator==(const Shape& other) const;
    bool operator==(const ShapeBase::Container& other) const;

    [[nodiscard]] size_t rank() const;
    [[nodiscard]] uint64_t volume() const;

    uint32_t get_normalized_index(std::int64_t index) const;

    // Needed for reflect / fmt.
    // Uses view() to hash/format the original (unpadded) dimensions.
    static constexpr auto attribute_names = std::forward_as_tuple("shape");
    auto attribute_values() const { return std::make_tuple(this->view()); }

    std::array<uint32_t, 4> to_array_4D() const;
    Shape to_rank(size_t new_rank) const;

    friend std::ostream& operator<<(std::ostream& os, const Shape& shape);
};

std::ostream& operator<<(std::ostream& os, const tt::tt_metal::Shape& shape);

ttsl::SmallVector<size_t> compute_strides(const tt::tt_metal::Shape& shape);

/**
 * @brief Computes a flat (linear) index from multi-dimensional indices and strides.
 *
 * This function converts a set of multi-dimensional indices into a single
 * linear index using the provided strides. The computation is equivalent to
 * a dot product between the indices and their corresponding strides
 *
 * @param indices  A span of per-dimension indices.
 * @param strides  A span of per-dimension strides corresponding to the layout.
 *
 * @return The computed flat (linear) index.
 *
 * @note The `indices` and `strides` spans must have the same length.
 */
std::size_t compute_flat_indices(ttsl::Span<const uint32_t> indices, ttsl::Span<const size_t> strides);

}  // namespace tt::tt_metal

// Out-of-line string conversion (defined in shape.cpp).
// Placed outside tt::tt_metal to avoid hiding std::to_string via ADL.
namespace ttsl::fmt_detail {
std::string to_string(const tt::tt_metal::Shape& shape);
}  // namespace ttsl::fmt_detail

// Lightweight fmt::formatter – delegates to out-of-line to_string().
template <>
struct fmt::formatter<tt::tt_metal::Shape> : fmt::formatter<std::string_view> {
    auto format(const tt::tt_metal::Shape& val, fmt::format_context& ctx) const {
        return fmt::formatter<std::string_view>::format(ttsl::fmt_detail::to_string(val), ctx);
    }
};

// Forward declarations of json trait templates (avoids pulling in reflection.hpp)
namespace ttsl::json {
template <typename T>
struct to_json_t;
template <typename T>
struct from_json_t;
}  // namespace ttsl::json

#include <nlohmann/json_fwd.hpp>

template <>
struct ttsl::json::to_json_t<tt::tt_metal::Shape> {
    nlohmann::json operator()(const tt::tt_metal::Shape& shape) const;
};

template <>
struct ttsl::json::from_json_t<tt::tt_metal::Shape> {
    tt::tt_metal::Shape operator()(const nlohmann::json& json_object) const;
};
