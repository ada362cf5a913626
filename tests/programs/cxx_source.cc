// Input of the g++ test: templates, <map>, <string>, <vector>, lambdas.
#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace
{

template <typename K, typename V> class Registry {
public:
	void add(const K &k, V v)
	{
		items_[k].push_back(std::move(v));
	}
	template <typename F> V fold(const K &k, V init, F f) const
	{
		auto it = items_.find(k);
		if (it == items_.end())
			return init;
		return std::accumulate(it->second.begin(), it->second.end(), init, f);
	}
	std::size_t size() const
	{
		return items_.size();
	}

private:
	std::map<K, std::vector<V>> items_;
};

template <int N> struct Fib {
	static constexpr long value = Fib<N - 1>::value + Fib<N - 2>::value;
};
template <> struct Fib<1> {
	static constexpr long value = 1;
};
template <> struct Fib<0> {
	static constexpr long value = 0;
};

} // namespace

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};

struct Rect : Shape {
	double w, h;
	Rect(double w_, double h_) : w(w_), h(h_)
	{
	}
	double area() const override
	{
		return w * h;
	}
};

long run(int n)
{
	Registry<std::string, long> reg;
	for (int i = 0; i < n; i++)
		reg.add("key" + std::to_string(i % 7), i * Fib<20>::value);
	std::vector<std::unique_ptr<Shape>> shapes;
	for (int i = 1; i <= n; i++)
		shapes.push_back(std::make_unique<Rect>(i, i + 1));
	std::sort(shapes.begin(), shapes.end(),
		  [](const auto &a, const auto &b) { return a->area() > b->area(); });
	std::map<std::string, std::string> names{{"a", "alpha"}, {"b", "beta"}};
	return reg.fold("key3", 0L, [](long a, long b) { return a + b; }) +
	       static_cast<long>(shapes.front()->area()) + static_cast<long>(names.size());
}
