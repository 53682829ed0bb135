#include "dispatcher/core/ivalue.h"

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/error.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

using Tag = IValue::Tag;

Tensor cpuTensor(std::vector<int64_t> sizes = {2}) {
  return detail::makeEmptyTensor(sizes, kFloat, Device("cpu"));
}

std::string printed(const IValue& v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

static_assert(sizeof(IValue) == 16, "an IValue is 16 bytes");
static_assert(std::is_nothrow_move_constructible<IValue>::value,
              "moves never throw");
static_assert(std::is_nothrow_constructible<IValue, Tensor>::value, "");
static_assert(std::is_nothrow_constructible<IValue, int64_t>::value, "");
static_assert(std::is_nothrow_constructible<IValue, double>::value, "");
static_assert(std::is_nothrow_constructible<IValue, Device>::value, "");

TEST(IValue, EveryTagRoundTrips) {
  Tensor t = cpuTensor();
  struct Case {
    IValue value;
    Tag tag;
    const char* kind;
    std::function<void(const IValue&)> check;
  };
  const std::vector<Case> cases = {
      {IValue(), Tag::None, "None",
       [](const IValue& v) { EXPECT_TRUE(v.isNone()); }},
      {IValue(t), Tag::Tensor, "Tensor",
       [&](const IValue& v) { EXPECT_TRUE(v.toTensor().is_same(t)); }},
      {IValue(2.5), Tag::Double, "Double",
       [](const IValue& v) { EXPECT_EQ(v.toDouble(), 2.5); }},
      {IValue(int64_t{-7}), Tag::Int, "Int",
       [](const IValue& v) { EXPECT_EQ(v.toInt(), -7); }},
      {IValue(true), Tag::Bool, "Bool",
       [](const IValue& v) { EXPECT_TRUE(v.toBool()); }},
      {IValue("text"), Tag::String, "String",
       [](const IValue& v) {
         EXPECT_EQ(v.toStringRef(), "text");
         EXPECT_EQ(v.toStringView(), "text");
         EXPECT_EQ(v.toString()->string(), "text");
       }},
      {IValue(Device("cuda:1")), Tag::Device, "Device",
       [](const IValue& v) { EXPECT_EQ(v.toDevice(), Device("cuda:1")); }},
      {IValue(std::vector<int64_t>{1, 2, 3}), Tag::IntList, "IntList",
       [](const IValue& v) {
         EXPECT_EQ(v.toIntListRef(), (std::vector<int64_t>{1, 2, 3}));
         EXPECT_EQ(v.toIntVector(), (std::vector<int64_t>{1, 2, 3}));
         EXPECT_EQ(v.toIntList()->size(), 3u);
       }},
      {IValue(std::vector<double>{0.5, 1.5}), Tag::DoubleList, "DoubleList",
       [](const IValue& v) {
         EXPECT_EQ(v.toDoubleListRef(), (std::vector<double>{0.5, 1.5}));
         EXPECT_EQ(v.toDoubleVector(), (std::vector<double>{0.5, 1.5}));
         EXPECT_EQ(v.toDoubleList()->size(), 2u);
       }},
      {IValue(std::vector<bool>{true, false}), Tag::BoolList, "BoolList",
       [](const IValue& v) {
         EXPECT_EQ(v.toBoolListRef(), (std::vector<bool>{true, false}));
         EXPECT_EQ(v.toBoolVector(), (std::vector<bool>{true, false}));
         EXPECT_EQ(v.toBoolList()->size(), 2u);
       }},
      {IValue(std::vector<Tensor>{t, t}), Tag::TensorList, "TensorList",
       [&](const IValue& v) {
         ASSERT_EQ(v.toTensorListRef().size(), 2u);
         EXPECT_TRUE(v.toTensorListRef()[1].is_same(t));
         EXPECT_EQ(v.toTensorVector().size(), 2u);
         EXPECT_EQ(v.toTensorList()->size(), 2u);
       }},
      {IValue(std::vector<IValue>{IValue(1), IValue("a")}), Tag::GenericList,
       "GenericList",
       [](const IValue& v) {
         ASSERT_EQ(v.toListRef().size(), 2u);
         EXPECT_EQ(v.toListRef()[0].toInt(), 1);
         EXPECT_EQ(v.toListRef()[1].toStringRef(), "a");
         EXPECT_EQ(v.toGenericList()->size(), 2u);
       }},
      {IValue::makeTuple({IValue(1), IValue(2.0)}), Tag::Tuple, "Tuple",
       [](const IValue& v) {
         ASSERT_EQ(v.toTupleRef().elements().size(), 2u);
         EXPECT_EQ(v.toTupleRef().elements()[1].toDouble(), 2.0);
         EXPECT_EQ(v.toTuple()->size(), 2u);
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    EXPECT_EQ(c.value.tag(), c.tag);
    EXPECT_STREQ(c.value.tagKind(), c.kind);
    c.check(c.value);
    IValue copy = c.value;
    EXPECT_EQ(copy.tag(), c.tag);
    c.check(copy);
    IValue moved = std::move(copy);
    EXPECT_TRUE(copy.isNone());  // NOLINT: moved-from is None by contract
    c.check(moved);
    EXPECT_EQ(moved, c.value);
    EXPECT_TRUE(moved.isSameIdentity(c.value));
    // Exactly one isX() holds.
    const bool is[] = {
        c.value.isNone(),     c.value.isTensor(),     c.value.isDouble(),
        c.value.isInt(),      c.value.isBool(),       c.value.isString(),
        c.value.isDevice(),   c.value.isIntList(),    c.value.isDoubleList(),
        c.value.isBoolList(), c.value.isTensorList(), c.value.isGenericList(),
        c.value.isTuple()};
    for (int i = 0; i < 13; ++i) {
      EXPECT_EQ(is[i], i == static_cast<int>(c.tag)) << "isX() #" << i;
    }
    EXPECT_EQ(c.value.isList(),
              c.tag >= Tag::IntList && c.tag <= Tag::GenericList);
  }
}

TEST(IValue, WrongTagSaysWhatWasExpected) {
  struct Case {
    IValue value;
    std::function<void(const IValue&)> access;
    const char* message;
  };
  const std::vector<Case> cases = {
      {IValue(3), [](const IValue& v) { v.toTensor(); },
       "Expected Tensor but got Int"},
      {IValue(), [](const IValue& v) { v.toInt(); },
       "Expected Int but got None"},
      {IValue(1.0), [](const IValue& v) { v.toBool(); },
       "Expected Bool but got Double"},
      {IValue(true), [](const IValue& v) { v.toDouble(); },
       "Expected Double but got Bool"},
      {IValue(2), [](const IValue& v) { v.toStringRef(); },
       "Expected String but got Int"},
      {IValue("cpu"), [](const IValue& v) { v.toDevice(); },
       "Expected Device but got String"},
      {IValue(std::vector<double>{1.0}),
       [](const IValue& v) { v.toIntListRef(); },
       "Expected IntList but got DoubleList"},
      {IValue(std::vector<int64_t>{1}), [](const IValue& v) { v.toListRef(); },
       "Expected GenericList but got IntList"},
      {IValue(cpuTensor()), [](const IValue& v) { v.toTensorListRef(); },
       "Expected TensorList but got Tensor"},
      {IValue(1), [](const IValue& v) { v.toTupleRef(); },
       "Expected Tuple but got Int"},
      {IValue("s"), [](const IValue& v) { v.toScalar(); },
       "Expected Scalar but got String"},
      {IValue(1.0), [](const IValue& v) { v.toScalarType(); },
       "Expected ScalarType (an Int) but got Double"},
      {IValue(Device("cpu")), [](const IValue& v) { v.toList(); },
       "Expected List but got Device"},
      {IValue(1), [](const IValue& v) { v.to<std::vector<int64_t>>(); },
       "Expected IntList but got Int"},
      {IValue(std::vector<int64_t>{1}),
       [](const IValue& v) { v.toBoolVector(); },
       "Expected BoolList but got IntList"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    try {
      c.access(c.value);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Type);
      EXPECT_EQ(e.message(), c.message);
    }
  }
  IValue v(3);
  EXPECT_THROW(std::move(v).toTensor(), Error);
  EXPECT_EQ(v.toInt(), 3);  // a failed move-out leaves the value
}

TEST(IValue, TensorRefcountsAcrossCopiesAndMoves) {
  Tensor t = cpuTensor();
  EXPECT_EQ(t.use_count(), 1u);
  {
    IValue a(t);
    EXPECT_EQ(t.use_count(), 2u);
    EXPECT_EQ(a.use_count(), 2u);
    IValue b = a;
    EXPECT_EQ(t.use_count(), 3u);
    IValue c = std::move(b);
    EXPECT_EQ(t.use_count(), 3u);
    const Tensor& ref = c.toTensor();  // no new reference
    EXPECT_EQ(t.use_count(), 3u);
    EXPECT_TRUE(ref.is_same(t));
    Tensor out = std::move(c).toTensor();
    EXPECT_TRUE(c.isNone());  // NOLINT: moved out
    EXPECT_EQ(t.use_count(), 3u);
    a = IValue(5);  // releases a's reference
    EXPECT_EQ(t.use_count(), 2u);
    IValue d(std::move(out));
    EXPECT_EQ(t.use_count(), 2u);
    d = d;  // self-assignment keeps the reference
    EXPECT_EQ(t.use_count(), 2u);
    IValue& self = d;
    d = std::move(self);  // and so does self-move
    EXPECT_EQ(t.use_count(), 2u);
    EXPECT_TRUE(d.isTensor());
  }
  EXPECT_EQ(t.use_count(), 1u);
}

TEST(IValue, CountedPayloadsAreSharedNotCopied) {
  IValue s("shared");
  EXPECT_EQ(s.use_count(), 1u);
  IValue s2 = s;
  EXPECT_EQ(s.use_count(), 2u);
  EXPECT_EQ(&s.toStringRef(), &s2.toStringRef());
  EXPECT_TRUE(s.isSameIdentity(s2));

  IValue list(std::vector<int64_t>{1, 2});
  IValue list2 = list;
  EXPECT_EQ(&list.toIntListRef(), &list2.toIntListRef());
  EXPECT_EQ(list.use_count(), 2u);
  auto handle = list.toIntList();
  EXPECT_EQ(list.use_count(), 3u);
  handle.reset();
  list2 = IValue();
  EXPECT_EQ(list.use_count(), 1u);

  IValue equal_list(std::vector<int64_t>{1, 2});
  EXPECT_EQ(list, equal_list);                    // same contents
  EXPECT_FALSE(list.isSameIdentity(equal_list));  // different objects

  Tensor t = cpuTensor();
  {
    IValue tensors(std::vector<Tensor>{t, t});
    EXPECT_EQ(t.use_count(), 3u);
    IValue copy = tensors;  // shares the list: no tensor counts change
    EXPECT_EQ(t.use_count(), 3u);
    std::vector<Tensor> out = copy.toTensorVector();
    EXPECT_EQ(t.use_count(), 5u);
  }
  EXPECT_EQ(t.use_count(), 1u);

  {
    IValue tuple = IValue::makeTuple({IValue(t), IValue("x")});
    EXPECT_EQ(t.use_count(), 2u);
    IValue copy = tuple;
    EXPECT_EQ(tuple.use_count(), 2u);
    EXPECT_EQ(t.use_count(), 2u);
  }
  EXPECT_EQ(t.use_count(), 1u);
}

TEST(IValue, AssigningFromInsideItsOwnPayload) {
  // The right-hand side lives inside the list the left-hand side releases.
  IValue outer(std::vector<IValue>{IValue("inner"), IValue(1)});
  IValue keep = outer.toListRef()[0];
  outer = outer.toListRef()[0];
  EXPECT_EQ(outer.toStringRef(), "inner");
  IValue nested(std::vector<IValue>{IValue(std::vector<IValue>{IValue(7)})});
  nested = std::move(nested.toGenericList()->elements()[0]);
  EXPECT_EQ(nested.toListRef()[0].toInt(), 7);
}

TEST(IValue, ScalarsAreStoredAsNumbers) {
  struct Case {
    Scalar s;
    Tag tag;
  };
  const std::vector<Case> cases = {{Scalar(3), Tag::Int},
                                   {Scalar(0.5), Tag::Double},
                                   {Scalar(true), Tag::Bool}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.s.str());
    IValue v(c.s);
    EXPECT_EQ(v.tag(), c.tag);
    EXPECT_TRUE(v.isScalar());
    EXPECT_EQ(v.toScalar(), c.s);
    EXPECT_EQ(v.to<Scalar>(), c.s);
  }
  EXPECT_FALSE(IValue("x").isScalar());
  EXPECT_FALSE(IValue().isScalar());
}

TEST(IValue, EnumsAreStoredAsInts) {
  IValue dtype(kHalf);
  EXPECT_TRUE(dtype.isInt());
  EXPECT_EQ(dtype.toInt(), 5);
  EXPECT_EQ(dtype.toScalarType(), kHalf);
  IValue layout(Layout::SparseCsr);
  EXPECT_EQ(layout.toInt(), 2);
  EXPECT_EQ(layout.toLayout(), Layout::SparseCsr);
  IValue format(MemoryFormat::ChannelsLast);
  EXPECT_EQ(format.toInt(), 2);
  EXPECT_EQ(format.toMemoryFormat(), MemoryFormat::ChannelsLast);
  EXPECT_EQ(IValue(6).toScalarType(), kFloat);
  EXPECT_EQ(IValue(6).to<ScalarType>(), kFloat);
  struct Case {
    std::function<void()> access;
    const char* message;
  };
  const std::vector<Case> cases = {
      {[] { IValue(9).toScalarType(); },
       "toScalarType(): 9 is not a ScalarType"},
      {[] { IValue(8).toLayout(); }, "toLayout(): 8 is not a Layout"},
      {[] { IValue(-1).toMemoryFormat(); },
       "toMemoryFormat(): -1 is not a MemoryFormat"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    try {
      c.access();
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_EQ(e.message(), c.message);
    }
  }
}

TEST(IValue, ConstructorOverloads) {
  EXPECT_TRUE(IValue(1).isInt());
  EXPECT_TRUE(IValue(size_t{1}).isInt());
  EXPECT_TRUE(IValue(int8_t{1}).isInt());
  EXPECT_TRUE(IValue(1.0f).isDouble());
  EXPECT_TRUE(IValue(false).isBool());
  EXPECT_TRUE(IValue("lit").isString());
  EXPECT_TRUE(IValue(std::string("s")).isString());
  EXPECT_TRUE(IValue(std::string_view("v")).isString());
  EXPECT_TRUE(IValue(ivalue::ConstantString::create("c")).isString());
  EXPECT_TRUE(IValue(Device("meta")).isDevice());
  EXPECT_TRUE(IValue(std::nullopt).isNone());
  std::vector<int64_t> sizes = {2, 3};
  EXPECT_EQ(IValue(IntArrayRef(sizes)).toIntListRef(), sizes);
  EXPECT_EQ(IValue(std::vector<int>{4, 5}).toIntListRef(),
            (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(IValue(std::vector<float>{0.5f}).toDoubleListRef(),
            (std::vector<double>{0.5}));
  IValue strings(std::vector<std::string>{"a", "b"});
  EXPECT_TRUE(strings.isGenericList());
  EXPECT_EQ(strings.to<std::vector<std::string>>(),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_THROW(IValue(intrusive_ptr<ivalue::Tuple>()), Error);
  EXPECT_THROW(IValue(intrusive_ptr<ivalue::ConstantString>()), Error);
  // An undefined Tensor is a Tensor, not None.
  IValue undefined{Tensor()};
  EXPECT_TRUE(undefined.isTensor());
  EXPECT_FALSE(undefined.toTensor().defined());
  EXPECT_FALSE(undefined.isIntrusivePtr());
  EXPECT_TRUE(undefined.isSameIdentity(IValue()));
}

TEST(IValue, Optionals) {
  std::optional<int64_t> none;
  EXPECT_TRUE(IValue(none).isNone());
  EXPECT_EQ(IValue(std::optional<int64_t>(4)).toInt(), 4);
  Tensor t = cpuTensor();
  IValue opt_tensor{std::optional<Tensor>(t)};
  EXPECT_TRUE(opt_tensor.toTensor().is_same(t));
  EXPECT_EQ(IValue().toOptional<int64_t>(), std::nullopt);
  EXPECT_EQ(IValue(3).toOptional<int64_t>(), 3);
  EXPECT_EQ(IValue().to<std::optional<double>>(), std::nullopt);
  EXPECT_EQ(IValue(2.0).to<std::optional<double>>(), 2.0);
  IValue list_of_optionals(std::vector<std::optional<Tensor>>{t, std::nullopt});
  auto back = list_of_optionals.to<std::vector<std::optional<Tensor>>>();
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(back[0]->is_same(t));
  EXPECT_FALSE(back[1].has_value());
}

TEST(IValue, GenericTo) {
  Tensor t = cpuTensor();
  EXPECT_TRUE(IValue(t).to<Tensor>().is_same(t));
  IValue moving(t);
  Tensor taken = std::move(moving).to<Tensor>();
  EXPECT_TRUE(moving.isNone());  // NOLINT: moved out
  EXPECT_EQ(IValue(7).to<int64_t>(), 7);
  EXPECT_EQ(IValue(0.25).to<double>(), 0.25);
  EXPECT_EQ(IValue(true).to<bool>(), true);
  EXPECT_EQ(IValue("s").to<std::string>(), "s");
  EXPECT_EQ(IValue(Device("cuda:2")).to<Device>(), Device("cuda:2"));
  EXPECT_EQ(IValue(Layout::Mkldnn).to<Layout>(), Layout::Mkldnn);
  EXPECT_EQ(IValue(MemoryFormat::Preserve).to<MemoryFormat>(),
            MemoryFormat::Preserve);
  EXPECT_EQ(IValue(std::vector<double>{1.0}).to<std::vector<double>>(),
            (std::vector<double>{1.0}));
  EXPECT_EQ(IValue(std::vector<bool>{true}).to<std::vector<bool>>(),
            (std::vector<bool>{true}));
  EXPECT_EQ(IValue(std::vector<Tensor>{t}).to<std::vector<Tensor>>().size(),
            1u);
  EXPECT_EQ(IValue(std::vector<IValue>{IValue(1)}).to<std::vector<IValue>>(),
            (std::vector<IValue>{IValue(1)}));
  EXPECT_EQ(IValue::makeTuple({IValue(1)})
                .to<intrusive_ptr<ivalue::Tuple>>()
                ->elements()[0]
                .toInt(),
            1);
  EXPECT_EQ(IValue(5).to<IValue>(), IValue(5));
  // toList() boxes the elements of any list.
  EXPECT_EQ(IValue(std::vector<int64_t>{1, 2}).toList(),
            (std::vector<IValue>{IValue(1), IValue(2)}));
  EXPECT_EQ(IValue(std::vector<bool>{false}).toList(),
            (std::vector<IValue>{IValue(false)}));
}

TEST(IValue, Printing) {
  Tensor t = cpuTensor({2, 3});
  struct Case {
    IValue value;
    const char* text;
  };
  const std::vector<Case> cases = {
      {IValue(), "None"},
      {IValue(3), "3"},
      {IValue(-1.5), "-1.5"},
      {IValue(2.0), "2.0"},
      {IValue(std::numeric_limits<double>::infinity()), "inf"},
      {IValue(true), "True"},
      {IValue("a \"quoted\"\n\\ string"), "\"a \\\"quoted\\\"\\n\\\\ string\""},
      {IValue(Device("cuda:0")), "cuda:0"},
      {IValue(t), "Tensor(sizes=[2, 3], dtype=Float, device=cpu)"},
      {IValue(Tensor()), "Tensor(undefined)"},
      {IValue(std::vector<int64_t>{1, 2}), "[1, 2]"},
      {IValue(std::vector<int64_t>{}), "[]"},
      {IValue(std::vector<double>{1.0, 0.1}), "[1.0, 0.1]"},
      {IValue(std::vector<bool>{true, false}), "[True, False]"},
      {IValue(std::vector<Tensor>{t}),
       "[Tensor(sizes=[2, 3], dtype=Float, device=cpu)]"},
      {IValue(std::vector<IValue>{IValue(1), IValue("x"), IValue()}),
       "[1, \"x\", None]"},
      {IValue::makeTuple({IValue(1), IValue(2.5)}), "(1, 2.5)"},
      {IValue::makeTuple({IValue(1)}), "(1,)"},
      {IValue::makeTuple({}), "()"},
      {IValue(kFloat), "6"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(printed(c.value), c.text);
  }
  std::ostringstream out;
  out << Tag::GenericList;
  EXPECT_EQ(out.str(), "GenericList");
}

TEST(IValue, EqualityIsStrict) {
  Tensor t = cpuTensor();
  EXPECT_EQ(IValue(), IValue());
  EXPECT_EQ(IValue(1), IValue(int64_t{1}));
  EXPECT_NE(IValue(1), IValue(1.0));
  EXPECT_NE(IValue(1), IValue(true));
  EXPECT_NE(IValue(1), IValue());
  EXPECT_EQ(IValue("a"), IValue(std::string("a")));
  EXPECT_NE(IValue("a"), IValue("b"));
  EXPECT_EQ(IValue(t), IValue(t));
  EXPECT_NE(IValue(t), IValue(cpuTensor()));
  EXPECT_EQ(IValue(std::vector<Tensor>{t}), IValue(std::vector<Tensor>{t}));
  EXPECT_EQ(IValue::makeTuple({IValue(1), IValue("x")}),
            IValue::makeTuple({IValue(1), IValue("x")}));
  EXPECT_NE(IValue::makeTuple({IValue(1)}),
            IValue(std::vector<IValue>{IValue(1)}));
  EXPECT_NE(IValue(std::nan("")), IValue(std::nan("")));
  EXPECT_EQ(IValue(Device("cpu")), IValue(Device("cpu")));
}

TEST(IValue, SameIdentity) {
  Tensor t = cpuTensor();
  IValue list(std::vector<int64_t>{1});
  struct Case {
    IValue a;
    IValue b;
    bool same;
    const char* what;
  };
  const std::vector<Case> cases = {
      {IValue(), IValue(), true, "None, None"},
      {IValue(t), IValue(t), true, "one tensor"},
      {IValue(t), IValue(cpuTensor()), false, "two tensors"},
      {IValue(Tensor()), IValue(), true, "undefined tensor is None"},
      {IValue(), IValue(t), false, "None, tensor"},
      {IValue(3), IValue(3), true, "equal ints"},
      {IValue(3), IValue(3.0), false, "int, double"},
      {IValue("s"), IValue("s"), true, "equal strings"},
      {list, list, true, "one list"},
      {list, IValue(std::vector<int64_t>{1}), false, "equal lists"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(c.a.isSameIdentity(c.b), c.same);
    EXPECT_EQ(c.b.isSameIdentity(c.a), c.same);
  }
}

TEST(IValue, Swap) {
  Tensor t = cpuTensor();
  IValue a(t);
  IValue b("s");
  a.swap(b);
  EXPECT_TRUE(a.isString());
  EXPECT_TRUE(b.toTensor().is_same(t));
  EXPECT_EQ(t.use_count(), 2u);
}

TEST(IValue, ConcurrentCopiesOfSharedPayloads) {
  Tensor t = cpuTensor();
  const IValue values[] = {IValue(t), IValue("shared string"),
                           IValue(std::vector<Tensor>{t}),
                           IValue::makeTuple({IValue(t), IValue(1)})};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&values] {
      for (int j = 0; j < 5000; ++j) {
        for (const IValue& v : values) {
          IValue copy = v;
          IValue moved = std::move(copy);
          if (!moved.isSameIdentity(v)) ADD_FAILURE();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(values[0].use_count(), 4u);  // t, values[0], the list, the tuple
}

TEST(IValueList, MakeListOfAKindAndTheKindOfAnElement) {
  EXPECT_EQ(IValue::listTagOf(IValue(int64_t{1})), IValue::Tag::IntList);
  EXPECT_EQ(IValue::listTagOf(IValue(1.5)), IValue::Tag::DoubleList);
  EXPECT_EQ(IValue::listTagOf(IValue(true)), IValue::Tag::BoolList);
  EXPECT_EQ(IValue::listTagOf(IValue(std::string("s"))),
            IValue::Tag::GenericList);
  IValue ints = IValue::makeList(IValue::Tag::IntList,
                                 {IValue(int64_t{1}), IValue(int64_t{2})});
  ASSERT_TRUE(ints.isIntList());
  EXPECT_EQ(ints.toIntVector(), (std::vector<int64_t>{1, 2}));
  IValue bools = IValue::makeList(IValue::Tag::BoolList, {IValue(true)});
  ASSERT_TRUE(bools.isBoolList());
  IValue generic = IValue::makeList(IValue::Tag::GenericList,
                                    {IValue(int64_t{1}), IValue(1.5)});
  ASSERT_TRUE(generic.isGenericList());
  EXPECT_EQ(generic.toListRef().size(), 2u);
  // An element that does not fit the kind is an error.
  EXPECT_THROW(IValue::makeList(IValue::Tag::IntList, {IValue(1.5)}), Error);
}

TEST(IValueDict, InsertionOrderAndPythonSemantics) {
  auto d = ivalue::DictImpl::create(Tag::GenericList, Tag::IntList);
  d->insertOrAssign("b", 1);
  d->insertOrAssign("a", 2);
  d->insertOrAssign("c", 3);
  d->insertOrAssign("b", 10);  // an existing key keeps its place
  EXPECT_EQ(printed(IValue(d)), "{\"b\": 10, \"a\": 2, \"c\": 3}");
  ASSERT_TRUE(d->erase(IValue("a")).has_value());
  EXPECT_FALSE(d->erase(IValue("a")).has_value());
  d->insertOrAssign("a", 4);  // re-inserted: last
  EXPECT_EQ(printed(IValue(d)), "{\"b\": 10, \"c\": 3, \"a\": 4}");
  EXPECT_EQ(d->setDefault("c", 99).toInt(), 3);
  EXPECT_EQ(d->setDefault("z", 5).toInt(), 5);
  EXPECT_EQ(d->size(), 4u);
  d->checkInvariants();
  EXPECT_EQ(d->find(IValue("q")), nullptr);
  EXPECT_EQ(d->find(IValue("z"))->toInt(), 5);
  d->clear();
  EXPECT_TRUE(d->empty());
  d->checkInvariants();
}

TEST(IValueDict, KeysAreComparedAsTorch) {
  Tensor x = cpuTensor();
  Tensor y = cpuTensor();
  auto d = ivalue::DictImpl::create(Tag::TensorList, Tag::IntList);
  d->insertOrAssign(x, 1);
  d->insertOrAssign(y, 2);  // equal contents, another tensor: another key
  EXPECT_EQ(d->size(), 2u);
  EXPECT_EQ(d->find(IValue(x))->toInt(), 1);
  auto n = ivalue::DictImpl::create(Tag::DoubleList, Tag::IntList);
  n->insertOrAssign(0.0, 1);
  n->insertOrAssign(-0.0, 2);  // 0.0 == -0.0, as Python
  EXPECT_EQ(n->size(), 1u);
  EXPECT_EQ(n->find(IValue(0.0))->toInt(), 2);
  // Only str, int, float, bool and defined tensors are keys.
  for (const IValue& bad : {IValue(), IValue(std::vector<int64_t>{1}),
                            IValue(Tensor()), IValue::makeTuple({1})}) {
    SCOPED_TRACE(printed(bad));
    EXPECT_FALSE(ivalue::DictImpl::isKey(bad));
    try {
      d->insertOrAssign(bad, 3);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Type);
      EXPECT_NE(e.message().find("a dict key must be a str, int, float, bool"),
                std::string::npos)
          << e.message();
    }
  }
  EXPECT_EQ(d->size(), 2u);  // unchanged by the refused inserts
  d->checkInvariants();
}

TEST(IValueDict, SharedEqualityAndCopies) {
  auto d = ivalue::DictImpl::create(Tag::IntList, Tag::GenericList);
  d->insertOrAssign(1, "a");
  IValue a(d);
  IValue alias = a;
  alias.toDict()->insertOrAssign(2, "b");  // seen through every alias
  EXPECT_EQ(a.toDictRef().size(), 2u);
  EXPECT_TRUE(a.isSameIdentity(alias));
  IValue copy(a.toDictRef().copy());
  EXPECT_FALSE(a.isSameIdentity(copy));
  EXPECT_EQ(a, copy);
  // Equal whatever the order, as Python's dicts.
  auto r = ivalue::DictImpl::create(Tag::IntList, Tag::GenericList);
  r->insertOrAssign(2, "b");
  r->insertOrAssign(1, "a");
  EXPECT_EQ(a, IValue(r));
  r->insertOrAssign(1, "c");
  EXPECT_NE(a, IValue(r));
  EXPECT_EQ(a.tagKind(), std::string("Dict"));
  EXPECT_THROW(IValue(3).toDictRef(), Error);
  EXPECT_THROW(IValue(intrusive_ptr<ivalue::DictImpl>()), Error);
}

TEST(IValueFuture, NullIsRefused) {
  EXPECT_THROW(IValue(std::shared_ptr<jit::Future>()), Error);
  EXPECT_THROW(IValue(3).toFuture(), Error);
}

}  // namespace
}  // namespace turnout
