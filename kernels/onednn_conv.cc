#include "kernels/onednn_conv.h"

#if !defined(TURNOUT_TSAN)
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace turnout::onednn {

#if defined(TURNOUT_TSAN)

bool available() { return false; }

bool convForward(const Conv2dShape&, const float*, const float*,
                 const float*, float*) {
  return false;
}

#else

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::data_type kF32 = memory::data_type::f32;

const dnnl::engine& cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// A stream is not meant to be shared between threads that submit at once.
dnnl::stream& threadStream() {
  thread_local dnnl::stream stream(cpuEngine());
  return stream;
}

// `m` in the layout `want`: m itself, or a new buffer m is reordered into.
memory inLayout(const memory& m, const memory::desc& want,
                dnnl::stream& stream) {
  if (m.get_desc() == want) return m;
  memory out(want, cpuEngine());
  dnnl::reorder(m, out).execute(stream, const_cast<memory&>(m), out);
  return out;
}

}  // namespace

bool available() { return true; }

bool convForward(const Conv2dShape& s, const float* x, const float* w,
                 const float* bias, float* y) {
  try {
    const dnnl::engine& engine = cpuEngine();
    dnnl::stream& stream = threadStream();
    const memory::dims src_dims{s.batch, s.in_channels, s.ih, s.iw};
    const memory::dims dst_dims{s.batch, s.out_channels, s.oh, s.ow};
    const memory::dims bias_dims{s.out_channels};
    // A grouped weight is [groups, out / groups, in / groups, kh, kw].
    const bool grouped = s.groups > 1;
    const memory::dims wei_dims =
        grouped ? memory::dims{s.groups, s.out_channels / s.groups,
                               s.in_channels / s.groups, s.kh, s.kw}
                : memory::dims{s.out_channels, s.in_channels, s.kh, s.kw};
    const Tag wei_tag = grouped ? Tag::goihw : Tag::oihw;
    // oneDNN counts dilation from 0 (a dense kernel) and wants the padding
    // on the far side that makes its output size exactly (oh, ow).
    const memory::dims dilation{s.dh - 1, s.dw - 1};
    const memory::dims pad_l{s.ph, s.pw};
    const memory::dims pad_r{
        (s.oh - 1) * s.sh + (s.kh - 1) * s.dh + 1 - s.ih - s.ph,
        (s.ow - 1) * s.sw + (s.kw - 1) * s.dw + 1 - s.iw - s.pw};

    // `any`: oneDNN chooses the blocked layouts its fastest kernel wants.
    const memory::desc src_any(src_dims, kF32, Tag::any);
    const memory::desc wei_any(wei_dims, kF32, Tag::any);
    const memory::desc dst_any(dst_dims, kF32, Tag::any);
    const memory::desc bias_md(bias_dims, kF32, Tag::x);
    const auto desc =
        bias != nullptr
            ? dnnl::convolution_forward::desc(
                  dnnl::prop_kind::forward_inference,
                  dnnl::algorithm::convolution_direct, src_any, wei_any,
                  bias_md, dst_any, {s.sh, s.sw}, dilation, pad_l, pad_r)
            : dnnl::convolution_forward::desc(
                  dnnl::prop_kind::forward_inference,
                  dnnl::algorithm::convolution_direct, src_any, wei_any,
                  dst_any, {s.sh, s.sw}, dilation, pad_l, pad_r);
    // Created per call: oneDNN's primitive cache makes a repeated shape
    // cost about a microsecond.
    const dnnl::convolution_forward::primitive_desc pd(desc, engine);

    const memory src_user({src_dims, kF32, Tag::nchw}, engine,
                          const_cast<float*>(x));
    const memory wei_user({wei_dims, kF32, wei_tag}, engine,
                          const_cast<float*>(w));
    memory dst_user({dst_dims, kF32, Tag::nchw}, engine, y);
    memory src = inLayout(src_user, pd.src_desc(), stream);
    memory wei = inLayout(wei_user, pd.weights_desc(), stream);
    const bool dst_blocked = pd.dst_desc() != dst_user.get_desc();
    memory dst = dst_blocked ? memory(pd.dst_desc(), engine) : dst_user;
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    if (bias != nullptr) {
      args.emplace(DNNL_ARG_BIAS,
                   memory(bias_md, engine, const_cast<float*>(bias)));
    }
    dnnl::convolution_forward(pd).execute(stream, args);
    if (dst_blocked) {
      dnnl::reorder(dst, dst_user).execute(stream, dst, dst_user);
    }
    stream.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

#endif  // TURNOUT_TSAN

}  // namespace turnout::onednn
