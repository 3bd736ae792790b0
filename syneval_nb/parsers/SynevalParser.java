import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import edu.stanford.nlp.ling.CoreLabel;
import edu.stanford.nlp.ling.HasWord;
import edu.stanford.nlp.parser.lexparser.LexicalizedParser;
import edu.stanford.nlp.parser.lexparser.Options;
import edu.stanford.nlp.parser.lexparser.ParserQuery;
import edu.stanford.nlp.process.CoreLabelTokenFactory;
import edu.stanford.nlp.process.DocumentPreprocessor;
import edu.stanford.nlp.process.PTBTokenizer;
import edu.stanford.nlp.trees.GrammaticalStructure;
import edu.stanford.nlp.trees.LabeledScoredTreeFactory;
import edu.stanford.nlp.trees.PennTreebankLanguagePack;
import edu.stanford.nlp.trees.Tree;
import edu.stanford.nlp.trees.TreeFactory;
import edu.stanford.nlp.trees.TreePrint;
import edu.stanford.nlp.trees.TreebankLanguagePack;

/**
 * syneval-nb: one Stanford 3.3.1 parse per input line, two outputs (see syneval_nb/parsers/stanford.py, "records").
 *
 * Usage: java -cp stanford-parser.jar:models.jar:DIR SynevalParser MAX_LENGTH NEXT_LINE. Prints "%syneval-ready"
 * once the model is loaded; then, for every input line, "%syneval K" and K lines: (1) what the parser's command line
 * (-sentences newline -maxLength MAX_LENGTH -outputFormat oneline) prints for that line when the line before it and
 * the line after it are NEXT_LINE ("" when the line has no tokens, "%error" where that program would have died),
 * (2) the lines ParserDemo (Feng-Hirst's syntax program, in the jar) prints for the line, trimmed and tokenized alone
 * (none where ParserDemo would have stopped or died). When both tokenizations give the same words, one parse serves
 * both; (1) is printed before the grammatical structure changes the tree in place.
 */
class SynevalParser {
  static final String MODEL = "edu/stanford/nlp/models/lexparser/englishPCFG.ser.gz";

  public static void main(String[] args) throws Exception {
    int maxLength = Integer.parseInt(args[0]);
    String next = args[1];
    LexicalizedParser lp = LexicalizedParser.loadModel(MODEL);  // as ParserDemo: no maxLength
    Options op = lp.getOp();
    TreebankLanguagePack tlp = op.tlpParams.treebankLanguagePack();
    TreePrint oneline = new TreePrint("oneline", op.testOptions.outputFormatOptions, tlp,
        op.tlpParams.headFinder(), op.tlpParams.typedDependencyHeadFinder());
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
    out.println("%syneval-ready");
    out.flush();
    String line;
    while ((line = in.readLine()) != null) {
      List<String> answer = new ArrayList<String>();
      answer.add("");
      List<HasWord> cli = lineTokens(line, next, tlp);
      String input = line.trim();
      List<CoreLabel> demo = input.length() == 0 ? null
          : PTBTokenizer.factory(new CoreLabelTokenFactory(), "").getTokenizer(new StringReader(input)).tokenize();
      boolean shared = cli != null && demo != null && words(cli).equals(words(demo));
      if (cli != null && !shared) {
        answer.set(0, cliAnswer(lp, cli, maxLength, oneline));
      }
      if (demo != null) {
        try {
          ParserQuery pq = lp.parserQuery();
          Tree parse = null;
          try {
            if (pq.parse(demo)) {  // LexicalizedParser.parse(List), with the tree the command line prints
              parse = pq.getBestParse();
              parse.setScore(pq.getPCFGScore() % -10000.0);
            }
          } catch (Exception e) {
            System.err.println("Following exception caught during parsing:");
            e.printStackTrace();
          }
          if (shared) {
            answer.set(0, demo.size() > maxLength ? "(())" : parse == null ? cliAnswer(lp, cli, maxLength, oneline)
                : oneLine(oneline, parse));
          }
          if (parse == null) {
            parse = xTree(demo);
          }
          TreebankLanguagePack ptlp = new PennTreebankLanguagePack();  // ParserDemo.parseSentence from here on
          GrammaticalStructure gs = ptlp.grammaticalStructureFactory().newGrammaticalStructure(parse);
          gs.typedDependenciesCCprocessed();
          String record = print(new TreePrint("penn,typedDependenciesCollapsed"), parse);
          Collections.addAll(answer, record.split("\n", -1));
          answer.remove(answer.size() - 1);  // the text after the last newline (empty)
        } catch (Throwable e) {  // ParserDemo would have died: no record
          e.printStackTrace();
          while (answer.size() > 1) {
            answer.remove(answer.size() - 1);
          }
          if (shared && answer.get(0).length() == 0) {
            answer.set(0, "%error");
          }
        }
      }
      out.println("%syneval " + answer.size());
      for (String a : answer) {
        out.println(a);
      }
      out.flush();
    }
  }

  /** The tokens the command line parses for LINE between two lines NEXT (null: the line has no tokens). */
  static List<HasWord> lineTokens(String line, String next, TreebankLanguagePack tlp) {
    DocumentPreprocessor dp = new DocumentPreprocessor(new StringReader(next + "\n" + line + "\n" + next + "\n"));
    dp.setSentenceFinalPuncWords(tlp.sentenceFinalPunctuationWords());
    dp.setEscaper(null);
    dp.setSentenceDelimiter("\n");
    dp.setTagDelimiter(null);
    dp.setElementDelimiter(null);
    dp.setTokenizerFactory(tlp.getTokenizerFactory());
    List<List<HasWord>> sentences = new ArrayList<List<HasWord>>();
    for (List<HasWord> s : dp) {
      sentences.add(s);
    }
    return sentences.size() == 3 ? sentences.get(1) : null;
  }

  /** What ParseFiles prints for one sentence (its own parse). */
  static String cliAnswer(LexicalizedParser lp, List<HasWord> sentence, int maxLength, TreePrint oneline) {
    if (sentence.size() > maxLength) {
      return "(())";
    }
    try {
      ParserQuery pq = lp.parserQuery();
      pq.parseAndReport(sentence, new PrintWriter(System.err, true));
      Tree t = pq.getBestParse();
      return t == null ? "(())" : oneLine(oneline, t);
    } catch (Throwable e) {
      e.printStackTrace();
      return "%error";
    }
  }

  static String print(TreePrint tp, Tree t) {
    StringWriter sw = new StringWriter();
    PrintWriter pw = new PrintWriter(sw);
    tp.printTree(t, "", pw);
    pw.flush();
    return sw.toString();
  }

  /** The one line the command line prints for a tree (without its newline). */
  static String oneLine(TreePrint oneline, Tree t) {
    String s = print(oneline, t);
    return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
  }

  static List<String> words(List<? extends HasWord> tokens) {
    List<String> w = new ArrayList<String>();
    for (HasWord t : tokens) {
      w.add(t.word());
    }
    return w;
  }

  /** LexicalizedParser.parse's tree for a sentence it cannot parse. */
  static Tree xTree(List<? extends HasWord> lst) {
    TreeFactory lstf = new LabeledScoredTreeFactory();
    List<Tree> lst2 = new ArrayList<Tree>();
    for (HasWord obj : lst) {
      lst2.add(lstf.newTreeNode("X", Collections.singletonList(lstf.newLeaf(obj.word()))));
    }
    return lstf.newTreeNode("X", lst2);
  }
}
