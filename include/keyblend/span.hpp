// keyblend — views of caller-owned memory: `span<T>` for a buffer of consecutive elements (matrices,
// weights, layers, bones), `strided_span<T>` for a vertex attribute inside any vertex layout. Every
// job takes its buffers as one of these; a count is always the span's size().
//
// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace keyblend {

/// A view of `size()` consecutive elements of type T in caller memory (C++20's std::span, for
/// C++17). It owns nothing and checks nothing; jobs validate the spans they are given. Built from a
/// std::vector, a std::array, a C array, or a pointer and a count; a span of T converts to a span
/// of const T. A default-constructed span is empty (null data, size 0): "not given".
template <class T>
class span {
public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;

    constexpr span() noexcept = default;
    constexpr span(T* data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <std::size_t N>
    constexpr span(T (&array)[N]) noexcept : data_(array), size_(N) {}
    template <class U, std::size_t N,
              class = std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>>>
    constexpr span(std::array<U, N>& a) noexcept : data_(a.data()), size_(N) {}
    template <class U, std::size_t N,
              class = std::enable_if_t<std::is_convertible_v<const U (*)[], T (*)[]>>>
    constexpr span(const std::array<U, N>& a) noexcept : data_(a.data()), size_(N) {}
    template <class U, class A, class = std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>>>
    span(std::vector<U, A>& v) noexcept : data_(v.data()), size_(v.size()) {}
    template <class U, class A, class = std::enable_if_t<std::is_convertible_v<const U (*)[], T (*)[]>>>
    span(const std::vector<U, A>& v) noexcept : data_(v.data()), size_(v.size()) {}
    template <class U, class = std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>>>
    constexpr span(const span<U>& other) noexcept : data_(other.data()), size_(other.size()) {}

    constexpr T* data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    /// Element i. Precondition: i < size() (unchecked).
    constexpr T& operator[](std::size_t i) const noexcept { return data_[i]; }
    constexpr T* begin() const noexcept { return data_; }
    constexpr T* end() const noexcept { return data_ + size_; }
    /// Elements [offset, offset + count). Precondition: offset + count <= size() (unchecked).
    constexpr span subspan(std::size_t offset, std::size_t count) const noexcept {
        return span(data_ + offset, count);
    }

private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

template <class U, class A>
span(std::vector<U, A>&) -> span<U>;
template <class U, class A>
span(const std::vector<U, A>&) -> span<const U>;

/// A view of `size` elements in caller memory, each made of components of type T: component c of
/// element i is the T at byte offset `i * stride + c * component_stride` from `data`. What a vertex
/// attribute is in any layout:
///   - separate arrays, one per attribute (std::vector<glm::vec3>): stride = sizeof(glm::vec3);
///   - an interleaved vertex buffer (AoS): data = &buffer[0].normal.x, stride = sizeof(vertex);
///   - planar arrays (SoA, x[n] then y[n] then z[n] in one allocation): stride = sizeof(float),
///     component_stride = n * sizeof(float).
/// A view owns nothing and checks nothing; the jobs validate the spans they are given (non-null,
/// aligned for T, strides large enough that elements do not overlap). An empty span (data ==
/// nullptr, size == 0) stands for "not given". make_span (skin.hpp) builds the usual ones.
template <class T>
struct strided_span {
    T* data = nullptr;
    std::size_t size = 0;
    std::size_t stride = sizeof(T);
    std::size_t component_stride = sizeof(T);

    bool empty() const noexcept { return data == nullptr && size == 0; }
    /// A writable span is also a read-only one.
    template <class U = T, class = std::enable_if_t<!std::is_const_v<U>>>
    operator strided_span<const U>() const noexcept {
        return {data, size, stride, component_stride};
    }
    /// Component c of element i. Precondition: i < size, and c within the element (unchecked).
    T& operator()(std::size_t i, std::size_t c = 0) const noexcept {
        using byte = std::conditional_t<std::is_const_v<T>, const unsigned char, unsigned char>;
        return *reinterpret_cast<T*>(reinterpret_cast<byte*>(data) + i * stride + c * component_stride);
    }
};

/// A half-open range of vertices [begin, end) of a vertex job. `end == all` means "to the last
/// vertex".
struct vertex_range {
    static constexpr std::size_t all = static_cast<std::size_t>(-1);
    std::size_t begin = 0;
    std::size_t end = all;
};

} // namespace keyblend
